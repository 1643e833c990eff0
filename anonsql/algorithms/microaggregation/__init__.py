"""Microaggregation by clustering (seed 001): MDAV, k-TCA, C-TCA, attribute-oriented KDE, the
wLVQ2 supervision of their prototypes, and the paper's utility measures.

Every method clusters the *distinct* QI tuples of a table weighted by how many records carry
them, so records with equal QI tuples always share a group and the release is a function of
the original QI tuple (what the self-guarding output needs, :mod:`anonsql.output.guard`).
"""
