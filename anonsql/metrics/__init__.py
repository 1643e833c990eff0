"""Measures of a generalized table: risk, seed 004's unified information-loss metrics, and
ARX's quality models. Quality models used by the search are registered in ``QUALITY``."""
