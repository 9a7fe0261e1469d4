#!/usr/bin/env python3
"""Writes an f32 [r, c] input whose columns are masked with -inf in the
ways softmax over r must survive: a whole column (the result is NaN, as in
float64), a leading run longer than a split reduction's chunk, every other
row, one finite element, and -inf after the column's maximum.

usage: masked_columns.py OUT.npy ROWS COLUMNS SEED
"""
import sys

import numpy as np

out, rows, columns, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
if columns < 5 or rows < 8:
    sys.exit("masked_columns.py: needs at least 8 rows and 5 columns")
x = np.random.default_rng(seed).standard_normal((rows, columns)).astype(np.float32)
x[:, 0] = -np.inf
x[: (rows * 3) // 5, 1] = -np.inf
x[::2, 2] = -np.inf
x[:, 3] = -np.inf
x[rows // 2, 3] = 1.5
x[rows // 3, 4] = 40.0
x[rows // 3 + 1:, 4] = -np.inf
np.save(out, x)
