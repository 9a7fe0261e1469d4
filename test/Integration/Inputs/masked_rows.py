#!/usr/bin/env python3
"""Writes an f32 [r, c] input whose rows are masked with -inf in the ways
softmax over c must survive when a row is split over several blocks: a
whole row (the result is NaN, as in float64), a leading run of three
quarters of the row (whole slices of it -inf), every other column, one
finite element at the end, and -inf after the row's maximum.

usage: masked_rows.py OUT.npy ROWS COLUMNS SEED
"""
import sys

import numpy as np

out, rows, columns, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
if rows < 5 or columns < 8:
    sys.exit("masked_rows.py: needs at least 5 rows and 8 columns")
x = np.random.default_rng(seed).standard_normal((rows, columns)).astype(np.float32)
x[0, :] = -np.inf
x[1, : (columns * 3) // 4] = -np.inf
x[2, ::2] = -np.inf
x[3, :] = -np.inf
x[3, -1] = 1.5
x[4, columns // 3] = 40.0
x[4, columns // 3 + 1:] = -np.inf
np.save(out, x)
