#!/usr/bin/env python3
"""Checks that two nerve-run output directories hold the same arrays, the
second's with its first two axes swapped (a time-major and a time-minor run
of one neuron on the same data): bit for bit.

usage: same_transposed.py DIR_A DIR_B NAME...
"""
import os
import sys

import numpy as np


def main(argv):
    a_dir, b_dir, names = argv[0], argv[1], argv[2:]
    bad = 0
    for name in names:
        a = np.load(os.path.join(a_dir, name + ".npy"))
        b = np.ascontiguousarray(np.swapaxes(np.load(os.path.join(b_dir, name + ".npy")), 0, 1))
        if a.shape != b.shape or a.dtype != b.dtype:
            print("%s: %s %s against %s %s" % (name, a.shape, a.dtype, b.shape, b.dtype))
            bad += 1
            continue
        differ = np.count_nonzero(np.frombuffer(a.tobytes(), np.uint8) !=
                                  np.frombuffer(b.tobytes(), np.uint8))
        print("%s: %s" % (name, "same bits" if not differ else "%d bytes differ" % differ))
        bad += differ != 0
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
