"""Greedy class merging (seed 004's GAA): multidimensional recoding at the LCAs."""
