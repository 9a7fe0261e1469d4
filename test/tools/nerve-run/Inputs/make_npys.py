"""Writes the .npy files the nerve-run input tests read, well-formed and not."""
import os
import sys

import numpy as np

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
x = np.arange(12, dtype=np.float32).reshape(3, 4)
np.save(os.path.join(out, "good.npy"), x)
np.save(os.path.join(out, "f64.npy"), x.astype(np.float64))
np.save(os.path.join(out, "wrongshape.npy"), np.zeros((4, 3), dtype=np.float32))
np.save(os.path.join(out, "rank3.npy"), np.zeros((3, 4, 1), dtype=np.float32))
np.save(os.path.join(out, "fortran.npy"), np.asfortranarray(x))
np.save(os.path.join(out, "bigendian.npy"), x.astype(">f4"))
np.save(os.path.join(out, "complex.npy"), x.astype(np.complex64))
good = open(os.path.join(out, "good.npy"), "rb").read()
open(os.path.join(out, "truncated.npy"), "wb").write(good[:-5])
open(os.path.join(out, "magic.npy"), "wb").write(b"\x93NUMPX" + good[6:])
open(os.path.join(out, "extra.npy"), "wb").write(good + b"\0\0\0\0")
open(os.path.join(out, "empty.npy"), "wb").write(b"")
