"""Independent brute-force implementations (pandas groupby, explicit tree walks) that the
tests hold the library to. Written from the definitions, sharing no code with anonsql."""

from __future__ import annotations

import itertools
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


def _table_shares(df, s):
    return df[s].value_counts(normalize=True).to_dict()


def beta_values(df, qis, s, variant="basic"):
    """beta-likeness (Cao, Karras 2012, Definitions 2 and 4), value by value: the smallest
    beta the class satisfies; enhanced: infinite when a value's relative distance exceeds
    -ln q, whatever beta."""
    q = _table_shares(df, s)

    def f(col):
        p = col.value_counts(normalize=True)
        d = {v: (p[v] - q[v]) / q[v] for v in p.index}
        if variant == "enhanced" and any(d[v] > -math.log(q[v]) + 1e-9 for v in d):
            return math.inf
        return max(d.values())

    return classes(df, qis)[s].apply(f)


def delta_values(df, qis, s):
    """delta-disclosure (Brickell, Shmatikov 2008) as ARX tests it: the largest
    |log2(p / q)| over the values the class holds."""
    q = _table_shares(df, s)

    def f(col):
        p = col.value_counts(normalize=True)
        return max(abs(math.log2(p[v] / q[v])) for v in p.index)

    return classes(df, qis)[s].apply(f)


def grassberger_g(n: int) -> float:
    """Grassberger 2003 (arXiv:physics/0307138v2, eq. 29), from the digamma function:
    G_n = psi(n) + 1/2 (-1)^n (psi((n + 1) / 2) - psi(n / 2))."""
    from scipy.special import digamma

    return float(digamma(n) + 0.5 * (-1) ** n * (digamma((n + 1) / 2) - digamma(n / 2)))


def grassberger_values(df, qis, s):
    """Entropy l-diversity with Grassberger's estimator (Stammler et al. 2016, ARX): the
    estimate H = G_N - sum n_i G_{n_i} / N; value min(exp(H), distinct values)."""

    def f(col):
        counts = col.value_counts().tolist()
        n = sum(counts)
        h = grassberger_g(n) - sum(c * grassberger_g(c) for c in counts) / n
        return min(math.exp(h), len(counts))

    return classes(df, qis)[s].apply(f)


def arx_loss(gen, qis, rows_per_qi, levels, suppressed, gs_factor=0.5):
    """ARX's Loss (MetricMDNMLoss) record by record: per QI, a released record costs
    gFactor * (leaves below its value / leaves); a suppressed one 1 when sFactor = 1, else
    share + sFactor * (1 - share); the sum normalized between gFactor * N / leaves and N,
    floored to 10 decimals; geometric mean of (v + 1), minus 1. ``suppressed`` flags rows."""
    g = 1.0 if gs_factor <= 0.5 else 1.0 - 2 * (gs_factor - 0.5)
    sf = 2 * gs_factor if gs_factor < 0.5 else 1.0
    n = len(gen)
    values = []
    for q, rows, lv in zip(qis, rows_per_qi, levels, strict=True):
        leaves = len(rows)
        below: dict = {}
        for row in rows:
            below[row[lv]] = below.get(row[lv], 0) + 1
        total = 0.0
        for label, supp in zip(gen[q], suppressed, strict=True):
            share = below[label] / leaves
            if not supp:
                total += g * share
            else:
                total += 1.0 if sf == 1 else share + sf * (1 - share)
        lo = g * n / leaves
        v = max((total - lo) / (n - lo), 0.0) if n > lo else 0.0
        values.append(math.floor(v * 1e10 + 1e-4) / 1e10)
    prod = 1.0
    for v in values:
        prod *= (v + 1) ** (1 / len(values))
    return prod - 1


def generalize(df: pd.DataFrame, qis: list[str], rows_per_qi: list[list[list[str]]], levels):
    out = df.copy()
    for q, rows, lv in zip(qis, rows_per_qi, levels, strict=True):
        mapping = {r[0]: r[lv] for r in rows}
        out[q] = out[q].astype(str).map(mapping)
    return out


# -- GAA (seed 004, Algorithm 1 and Definition 17), written from the paper with plain loops --
def _tree(rows):
    """Nodes as (level, label) with ids in level-major order of first appearance, parents,
    and the leaves below each node."""
    depth = len(rows[0])
    ids, parent, leaves = {}, {}, {}
    for lv in range(depth):
        for r in rows:
            ids.setdefault((lv, r[lv]), len(ids))
    for r in rows:
        for lv in range(depth):
            node = (lv, r[lv])
            leaves.setdefault(node, set()).add(r[0])
            if lv + 1 < depth:
                parent[node] = (lv + 1, r[lv + 1])
    return ids, parent, leaves, depth


def _path(node, parent):
    out = [node]
    while out[-1] in parent:
        out.append(parent[out[-1]])
    return out


def gaa(df, qis, rows_per_qi, k, metric="total", strategy="s1", s=None, l_value=None, t=None):
    """Returns {row index: generalized (level, label) tuple}."""
    trees = [_tree(rows) for rows in rows_per_qi]

    def weight(j, x, y):  # edge x -> parent y, Total or NCP (seed 004 section 3.2.1)
        _ids, parent, leaves, depth = trees[j]
        if metric == "total":
            return (y[0] - x[0]) / (depth - 1)
        root = _path(x, parent)[-1]
        return (len(leaves[y]) - len(leaves[x])) / len(leaves[root])

    def cost(j, v, w):  # Definition 4: sum of the weights on the path from v up to w
        path = _path(v, trees[j][1])
        total = 0.0
        for a, b in itertools.pairwise(path):
            if a == w:
                break
            total += weight(j, a, b)
        return total

    def lca(j, a, b):
        pb = set(_path(b, trees[j][1]))
        return next(x for x in _path(a, trees[j][1]) if x in pb)

    def mu(a, b):  # Definition 6 on the classes' records
        return sum(cost(j, a[j], lca(j, a[j], b[j])) + cost(j, b[j], lca(j, a[j], b[j]))
                   for j in range(len(qis)))  # fmt: skip

    sens = list(df[s]) if s is not None else None
    overall = {}
    if sens is not None:
        for v in sens:
            overall[v] = overall.get(v, 0) + 1 / len(sens)

    def ldiv(members):
        counts = {}
        for i in members:
            counts[sens[i]] = counts.get(sens[i], 0) + 1
        return math.exp(
            -sum(c / len(members) * math.log(c / len(members)) for c in counts.values())
        )

    def tclo(members):
        counts = {}
        for i in members:
            counts[sens[i]] = counts.get(sens[i], 0) + 1
        return sum(abs(counts.get(v, 0) / len(members) - p) for v, p in overall.items())

    def bad(members):
        return (len(members) < k
                or (l_value is not None and ldiv(members) < l_value * (1 - 1e-12))
                or (t is not None and tclo(members) > t * (1 + 1e-12) + 1e-15))  # fmt: skip

    classes = {}
    for i in range(len(df)):
        key = tuple((0, str(df[q].iloc[i])) for q in qis)
        classes.setdefault(key, []).append(i)

    def idkey(key):
        return tuple(trees[j][0][key[j]] for j in range(len(qis)))

    def best(cands, f, maximize=False):
        vals = {c: f(c) for c in cands}
        top = max(vals.values()) if maximize else min(vals.values())
        tol = 1e-12 * max(1.0, abs(top))
        return [c for c in cands if (vals[c] >= top - tol if maximize else vals[c] <= top + tol)]

    while True:
        violating = [c for c in classes if bad(classes[c])]
        if not violating:
            break
        cs = min(violating, key=lambda c: (len(classes[c]), idkey(c)))
        others = [c for c in classes if c != cs]

        def merged(c, cs=cs):
            return classes[cs] + classes[c]

        def m_cost(c, cs=cs):
            return mu(cs, c)

        def m_l(c):
            return ldiv(merged(c))

        def m_t(c):
            return tclo(merged(c))

        if strategy == "s1":
            chosen = best(others, m_cost)
        elif strategy == "s2":
            chosen = best(best(others, m_cost), m_l, maximize=True)
        elif strategy == "s3":
            chosen = best(best(others, m_l, maximize=True), m_cost)
        elif strategy == "s4":
            chosen = best(others, lambda c: m_cost(c) / m_l(c))
        elif strategy == "s5":
            chosen = best(best(others, m_cost), m_t)
        elif strategy == "s6":
            chosen = best(best(others, m_t), m_cost)
        else:  # s7
            chosen = best(others, lambda c: m_cost(c) * m_t(c))
        partner = min(chosen, key=idkey)
        new = tuple(lca(j, cs[j], partner[j]) for j in range(len(qis)))
        members = classes.pop(cs) + classes.pop(partner)
        classes[new] = classes.get(new, []) + members
    return {i: key for key, members in classes.items() for i in members}
