"""Independent brute-force implementations (pandas groupby, explicit tree walks) that the
tests hold the library to. Written from the definitions, sharing no code with anonsql."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd


def classes(df: pd.DataFrame, qis: list[str]):
    return df.groupby(qis, dropna=False, sort=False)


def k_values(df, qis):
    return classes(df, qis).size().astype(float)


def distinct_values(df, qis, s):
    return classes(df, qis)[s].nunique().astype(float)


def entropy_values(df, qis, s):
    def f(col):
        p = col.value_counts(normalize=True)
        return math.exp(-sum(x * math.log(x) for x in p))

    return classes(df, qis)[s].apply(f)


def recursive_values(df, qis, s, l_value):
    def f(col):
        r = sorted(col.value_counts().tolist(), reverse=True)
        tail = sum(r[l_value - 1 :])
        return r[0] / tail if tail else math.inf

    return classes(df, qis)[s].apply(f)


def _dist(col, values):
    p = col.value_counts(normalize=True)
    return np.array([p.get(v, 0.0) for v in values])


def l1_values(df, qis, s):
    values = sorted(df[s].unique())
    q = _dist(df[s], values)
    return classes(df, qis)[s].apply(lambda c: float(np.abs(_dist(c, values) - q).sum()))


def equal_emd_values(df, qis, s):
    return l1_values(df, qis, s) / 2


def _order_key(v):
    try:
        return (0, float(v), v)
    except ValueError:
        return (1, 0.0, v)


def ordered_emd_values(df, qis, s):
    values = sorted(df[s].unique(), key=_order_key)
    m = len(values)
    q = _dist(df[s], values)

    def f(col):
        if m == 1:
            return 0.0
        d = _dist(col, values) - q
        return float(sum(abs(sum(d[: i + 1])) for i in range(m)) / (m - 1))

    return classes(df, qis)[s].apply(f)


def hierarchical_emd_values(df, qis, s, rows):
    """Li et al.'s formula over a hierarchy given as rows [leaf, ..., root]."""
    top = len(rows[0]) - 1
    values = sorted(df[s].unique())
    q = dict(zip(values, _dist(df[s], values), strict=True))

    def f(col):
        p = col.value_counts(normalize=True)
        extra = {(0, r[0]): p.get(r[0], 0.0) - q.get(r[0], 0.0) for r in rows}
        cost = 0.0
        for level in range(1, top + 1):
            pos: dict = {}
            neg: dict = {}
            nxt: dict = {}
            children = {(level - 1, r[level - 1]): r[level] for r in rows}
            for child, parent in children.items():
                e = extra[child]
                pos[parent] = pos.get(parent, 0.0) + max(e, 0.0)
                neg[parent] = neg.get(parent, 0.0) + max(-e, 0.0)
                nxt[(level, parent)] = nxt.get((level, parent), 0.0) + e
            extra = nxt
            cost += sum(level / top * min(pos[x], neg[x]) for x in pos)
        return cost

    return classes(df, qis)[s].apply(f)


def generalize(df: pd.DataFrame, qis: list[str], rows_per_qi: list[list[list[str]]], levels):
    out = df.copy()
    for q, rows, lv in zip(qis, rows_per_qi, levels, strict=True):
        mapping = {r[0]: r[lv] for r in rows}
        out[q] = out[q].astype(str).map(mapping)
    return out
