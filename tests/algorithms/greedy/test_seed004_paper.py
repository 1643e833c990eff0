"""Seed 004 by hand: values computed with pencil and paper from the paper's Definitions on its
own small example (Table 1, Figures 1-2, Example 1), kept as exact fractions in
``tests/fixtures/papers/gaa/`` (the derivations are the comments here).

Unlike ``tests/helpers/brute.py`` (a second implementation carrying the same interpretation
choices), every expected number here is derived in the comments from the paper's text alone.

The paper's Race hierarchy (Figures 1-2) is unbalanced: Dog hangs directly under Mammal while
Cat and Lion go through Felid. ``costs_matrix``/``costs_to_root`` take any tree, so Example 1
and the Figure 2 metric use it as drawn. ``Hierarchy`` (and so the seven named metrics) needs
every leaf at the same depth, so for those the Dog branch is padded with a copy of itself on
level 1 (``Dog -> Dog -> Mammal``), as ARX does; the padding is part of the stated arithmetic.
"""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest

from anonsql.algorithms.greedy.gaa import _QI, _Context, _ldiv, _tclo, _xlogx
from anonsql.hierarchy.hierarchy import Hierarchy
from anonsql.metrics.unified import UnifiedMetric, costs_matrix, costs_to_root, w1, w2
from tests.helpers import papers

# --- Table 1a (the paper's T) and Table 1b (its 4-anonymous T_ano) --------------------------
# tests/fixtures/papers/gaa/table1.csv; T_ano: records 1, 3, 7, 8 -> (*, Lion); records 2, 4,
# 5, 6 -> (*, Mammal)  (section 2.1)
TABLE1 = papers.frame("gaa", "table1.csv")
GENDER = TABLE1["gender"].tolist()
RACE = TABLE1["race"].tolist()
DISEASE = TABLE1["disease"].tolist()
ANO_RACE = TABLE1["ano_race"].tolist()

# --- Figure 2a as drawn: Cat, Lion -> Felid -> Mammal; Dog -> Mammal (figure2a.csv) ----------
# Example 1: w(Cat, Felid) = 1, w(Lion, Felid) = 1, w(Dog, Mammal) = 4, w(Felid, Mammal) = 3
FIGURE2A = papers.rows("gaa", "figure2a.csv")
NAMES = [r["node"] for r in FIGURE2A]
PARENTS = np.array([NAMES.index(r["parent"]) if r["parent"] else -1 for r in FIGURE2A])
WEIGHTS = np.array([float(papers.fraction(r["weight"])) for r in FIGURE2A])
#: the other values worked from the paper's definitions (worked_values.json)
WORKED = papers.data("gaa", "worked_values.json")


def _close(got: float, want: F) -> None:
    assert got == pytest.approx(float(want), rel=1e-12, abs=1e-15)


def test_example1_costs_matrix() -> None:
    # Definition 5: M(v, v') = cost(v, LCA(v, v')); the paper prints the matrix in Example 1.
    # e.g. M(Cat, Dog) = cost(Cat, Mammal) = 1 + 3 = 4; M(Felid, Dog) = cost(Felid, Mammal) = 3;
    # M(Felid, Cat) = cost(Felid, Felid) = 0; the Mammal row is all 0.
    matrix = papers.rows("gaa", "example1_costs.csv")  # rows and columns: NAMES
    paper = np.array([[float(papers.fraction(r[n])) for n in NAMES] for r in matrix])
    assert [r["node"] for r in matrix] == NAMES
    assert np.array_equal(costs_matrix(PARENTS, WEIGHTS), paper)


def _figure2_metric() -> UnifiedMetric:
    """The Figure 2 metric (Race as drawn, Gender's two edges weighing 5: "the cost of
    generalizing Male or Female in * is 5", section 3.1) on the library's cost code."""
    um = object.__new__(UnifiedMetric)  # weights given by hand, not by a named metric
    gender_to_root = costs_to_root(np.array([2, 2, -1]), np.array([5.0, 5.0, 0.0]))  # F, M, *
    um.to_root = [gender_to_root, costs_to_root(PARENTS, WEIGHTS)]
    return um


def test_table1b_alteration_figure2_metric() -> None:
    # Definition 6, per record: mu(F, E) = sum_j M(f_j, e_j) + M(e_j, f_j); f is an ancestor of
    # e so M(f, e) = 0 and M(e, f) = cost(e, f).
    #   Gender F/M -> *: 5 for all 8 records                                     -> 40
    #   Race: records 1, 3, 7, 8 Lion -> Lion: 0; records 2, 4 Dog -> Mammal: 4;
    #         records 5, 6 Cat -> Mammal: 1 + 3 = 4                               -> 16
    #   mu_T(T_ano) = 56.
    # Definition 7, T* = everything at the root: per record 5 + cost(race, Mammal) = 5 + 4 = 9
    # (Lion 1 + 3, Dog 4, Cat 1 + 3), mu_T(T*) = 72. alt = 56 / 72 * 100 = 700/9 %.
    um = _figure2_metric()
    g = {"F": 0, "M": 1, "*": 2}
    r = {n: i for i, n in enumerate(NAMES)}
    original = [np.array([g[x] for x in GENDER]), np.array([r[x] for x in RACE])]
    ano = [np.full(8, g["*"]), np.array([r[x] for x in ANO_RACE])]
    want = WORKED["figure2_alteration"]
    _close(um.table_cost(original, ano), F(want["table_cost"]))
    _close(um.worst_cost(original), F(want["worst_cost"]))
    _close(um.alteration(original, ano), F(want["alteration_percent"]))


def _hierarchies() -> list[Hierarchy]:
    gender = Hierarchy.from_rows("gender", [["F", "*"], ["M", "*"]])
    race = Hierarchy.from_rows(
        "race",
        [["Cat", "Felid", "Mammal"], ["Lion", "Felid", "Mammal"], ["Dog", "Dog", "Mammal"]],
    )
    return [gender, race]


def test_definition8_weightings() -> None:
    # Heights (nodes on the longest path): Gender 2, Race 3; m = 2 QIs.
    # w1(Q_j) = 1 - (h_j - 1)^m / sum_i (h_i - 1)^m: (2-1)^2 = 1, (3-1)^2 = 4, sum 5
    #   -> w1(Gender) = 4/5, w1(Race) = 1/5.
    # w2(Q_j) = h_max / h_j -> w2(Gender) = 3/2, w2(Race) = 1.
    d8 = WORKED["definition8"]
    assert [h.height for h in _hierarchies()] == d8["heights"]
    assert np.allclose(w1(d8["heights"]), [float(F(x)) for x in d8["w1"]])
    assert np.allclose(w2(d8["heights"]), [float(F(x)) for x in d8["w2"]])


# Edge weights (section 3.2) on the padded Figure 1 hierarchies, per edge:
#   g = F->* (= M->*), a = Cat->Felid (= Lion->Felid), b = Felid->Mammal,
#   c = Dog->Dog (padding), d = Dog->Mammal.
# nl: nl(*) = 2; nl(Felid) = 2, nl(Dog on level 1) = 1, nl(Mammal) = 3; leaves have nl = 1.
# Levels are counted from 0 at the leaves: the paper's edges satisfy lvl(x) = lvl(x') - 1 and
# Distortion's 1/(h - lvl(x')) must stay finite at the root (lvl = h - 1).
# NCP: (nl(x') - nl(x)) / nl(r): g = 1/2; a = 1/3, b = 1/3, c = 0, d = 2/3
# Total: (lvl(x') - lvl(x)) / (h - 1): g = 1/1; every Race edge 1/2
# LLM: (nl(x') - nl(x)) * w2: g = 1 * 3/2; a = b = 1, c = 0, d = 2
# NLLM: NCP * w2: g = 1/2 * 3/2 = 3/4; Race as NCP (w2 = 1)
# WLLM: (nl(x') - nl(x)) * w1: g = 4/5; a = b = 1/5, c = 0, d = 2/5
# WNLLM: NCP * w1: g = 1/2 * 4/5 = 2/5; a = b = 1/3 * 1/5 = 1/15, c = 0, d = 2/15
# Distortion: (1 / (h - lvl(x'))) / sum_{i=1}^{h-1} 1/(h - i) * w1.
#   Gender h = 2: sum = 1; x' = * (lvl 1): 1/1 / 1 * 4/5 = 4/5.
#   Race h = 3: sum = 1/2 + 1 = 3/2; x' on level 1: (1/2)/(3/2) * 1/5 = 1/15;
#   x' = Mammal (lvl 2): 1/(3/2) * 1/5 = 2/15.
EDGES = {
    r["metric"]: tuple(F(r[e]) for e in "gabcd") for r in papers.rows("gaa", "edge_weights.csv")
}


@pytest.mark.parametrize("metric", sorted(EDGES))
def test_section32_edge_weights(metric: str) -> None:
    hs = _hierarchies()
    um = UnifiedMetric(metric, hs)
    gender, race = hs
    g, a, b, c, d = EDGES[metric]
    _close(um.weights[0][gender.leaf("F")], g)
    _close(um.weights[0][gender.leaf("M")], g)
    _close(um.weights[1][race.leaf("Cat")], a)
    _close(um.weights[1][race.leaf("Lion")], a)
    _close(um.weights[1][race.node("Felid", 1)], b)
    _close(um.weights[1][race.leaf("Dog")], c)
    _close(um.weights[1][race.node("Dog", 1)], d)


# Definition 7 on Table 1b for every metric. With W(v) = cost(v, root): W(F) = W(M) = g,
# W(Cat) = W(Lion) = a + b, W(Dog) = c + d, and
#   mu_T(T_ano) = 8g (all genders to *) + 2(c + d) (records 2, 4) + 2(a + b) (records 5, 6)
#   mu_T(T*)    = 8g + 6(a + b) (records 1, 3, 5, 6, 7, 8) + 2(c + d) (records 2, 4)
# alteration.csv holds mu_T(T_ano) / mu_T(T*) in percent, per metric:
# ncp: (4 + 4/3 + 4/3) / (4 + 4 + 4/3) = (20/3) / (28/3) = 5/7
# total: (8 + 2 + 2) / (8 + 6 + 2) = 12/16
# llm: (12 + 4 + 4) / (12 + 12 + 4) = 20/28
# nllm: (6 + 4/3 + 4/3) / (6 + 4 + 4/3) = (26/3) / (34/3) = 13/17
# wllm: (32/5 + 4/5 + 4/5) / (32/5 + 12/5 + 4/5) = 40/48 = 5/6
# wnllm: (16/5 + 4/15 + 4/15) / (16/5 + 12/15 + 4/15) = (56/15) / (64/15) = 7/8
# distortion: a + b = c + d = 1/5: (32/5 + 2/5 + 2/5) / (32/5 + 6/5 + 2/5) = 36/40 = 9/10
ALTERATION = {r["metric"]: F(r["alteration_percent"]) for r in papers.rows("gaa", "alteration.csv")}


@pytest.mark.parametrize("metric", sorted(ALTERATION))
def test_table1b_alteration_named_metrics(metric: str) -> None:
    gender, race = _hierarchies()
    um = UnifiedMetric(metric, [gender, race])
    original = [
        np.array([gender.leaf(x) for x in GENDER]),
        np.array([race.leaf(x) for x in RACE]),
    ]
    ano = [
        np.full(8, gender.root),
        np.array([race.node(x, 0 if x == "Lion" else 2) for x in ANO_RACE]),
    ]
    _close(um.alteration(original, ano), ALTERATION[metric])
    # counts weighting (histogram rows) gives the same: the 8 records as 5 distinct rows
    keys = list(zip(GENDER, RACE, ANO_RACE, strict=True))
    uniq = list(dict.fromkeys(keys))
    counts = np.array([keys.count(u) for u in uniq])
    o = [np.array([gender.leaf(u[0]) for u in uniq]), np.array([race.leaf(u[1]) for u in uniq])]
    a = [
        np.full(len(uniq), gender.root),
        np.array([race.node(u[2], 0 if u[2] == "Lion" else 2) for u in uniq]),
    ]
    _close(um.alteration(o, a, counts), ALTERATION[metric])


# Sensitive values, order used for the count vectors below.
VALUES = ["Angina", "Broken paw", "Bronchitis", "Cold", "Conjunctivitis"]
# Whole table (8 records): Angina 1, Broken paw 2, Bronchitis 2, Cold 2, Conjunctivitis 1
# -> P(S, T) = (1/8, 1/4, 1/4, 1/4, 1/8).
OVERALL = np.array([1, 2, 2, 2, 1]) / 8


def _counts(records: list[int]) -> np.ndarray:
    return np.array([[DISEASE[i - 1] for i in records].count(v) for v in VALUES], dtype=float)


def test_table1b_ldiv_and_tclo() -> None:
    # T_ano class A = records 1, 3, 7, 8: Cold, Cold, Angina, Bronchitis -> (1/4, 0, 1/4, 1/2, 0)
    # T_ano class B = records 2, 4, 5, 6: Bronchitis, Conjunctivitis, Broken paw x2
    #                                                                    -> (0, 1/2, 1/4, 0, 1/4)
    # Definition 11: both have proportions {1/2, 1/4, 1/4}:
    #   entropy = 1/2 ln 2 + 1/4 ln 4 + 1/4 ln 4 = 3/2 ln 2, l_div = exp = 2^(3/2) = 2 sqrt 2.
    # Definition 14 (L1, not halved):
    #   A: |1/8-1/4| + |1/4-0| + |1/4-1/4| + |1/4-1/2| + |1/8-0| = 1/8+1/4+0+1/4+1/8 = 3/4
    #   B: |1/8-0| + |1/4-1/2| + |1/4-1/4| + |1/4-0| + |1/8-1/4| = 1/8+1/4+0+1/4+1/8 = 3/4
    # Table values: l_div(T_ano) = min = 2 sqrt 2; t_clo(T_ano) = max = 3/4.
    want = WORKED["table1b_classes"]
    counts = np.vstack([_counts(records) for records in want["records"]])
    sizes = np.array([4.0, 4.0])
    ldiv = _ldiv(counts, sizes)
    tclo = _tclo(counts, sizes, OVERALL)
    assert ldiv == pytest.approx([papers.number(x) for x in want["l_div"]], rel=1e-12)
    for got, w in zip(tclo, want["t_clo"], strict=True):
        _close(float(got), F(w))
    assert ldiv.min() == pytest.approx(min(map(papers.number, want["l_div"])), rel=1e-12)
    _close(float(tclo.max()), max(map(F, want["t_clo"])))


def test_table1a_ldiv_and_tclo() -> None:
    # The four classes of T (Table 1a), two records each:
    #   (F, Lion) 1, 3: Cold x2            l_div = exp(0) = 1
    #       t_clo = 1/8 + 1/4 + 1/4 + |1/4 - 1| + 1/8 = 3/2
    #   (F, Dog) 2, 4: Bronchitis, Conj.   l_div = exp(ln 2) = 2
    #       t_clo = 1/8 + 1/4 + |1/4-1/2| + 1/4 + |1/8-1/2| = 1/8+1/4+1/4+1/4+3/8 = 5/4
    #   (M, Cat) 5, 6: Broken paw x2       l_div = 1
    #       t_clo = 1/8 + |1/4 - 1| + 1/4 + 1/4 + 1/8 = 3/2
    #   (M, Lion) 7, 8: Angina, Bronchitis l_div = 2
    #       t_clo = |1/8-1/2| + 1/4 + |1/4-1/2| + 1/4 + 1/8 = 3/8+1/4+1/4+1/4+1/8 = 5/4
    # Table: l_div(T) = 1, t_clo(T) = 3/2.
    want = WORKED["table1a_classes"]
    counts = np.vstack([_counts(records) for records in want["records"]])
    sizes = np.full(4, 2.0)
    assert _ldiv(counts, sizes) == pytest.approx([F(x) for x in want["l_div"]], rel=1e-12)
    for got, w in zip(_tclo(counts, sizes, OVERALL), want["t_clo"], strict=True):
        _close(float(got), F(w))


def test_definition15_one_merging() -> None:
    # Merge C_s = (F, Lion) {Cold, Cold} with each other class of T, Total metric (padded
    # hierarchies: every Gender edge 1, every Race edge 1/2). Definition 6 for the pair of
    # class representatives: mu(C, C') = sum_j cost(c_j, lca) + cost(c'_j, lca).
    #   + (F, Dog):  Gender 0; Race Lion->Mammal 1/2+1/2 = 1, Dog->Mammal 1   -> mu = 2
    #                merged {Cold x2, Bronchitis, Conj.}: p = 1/2, 1/4, 1/4 -> l_div = 2 sqrt 2
    #                t_clo = 1/8 + 1/4 + |1/4-1/4| + |1/4-1/2| + |1/8-1/4| = 3/4
    #   + (M, Cat):  Gender 1 + 1; Race Lion->Felid 1/2, Cat->Felid 1/2        -> mu = 3
    #                merged {Cold x2, Broken paw x2}: l_div = 2
    #                t_clo = 1/8 + |1/4-1/2| + 1/4 + |1/4-1/2| + 1/8 = 1
    #   + (M, Lion): Gender 1 + 1; Race 0                                      -> mu = 2
    #                merged {Cold x2, Angina, Bronchitis}: l_div = 2 sqrt 2
    #                t_clo = |1/8-1/4| + 1/4 + 0 + |1/4-1/2| + 1/8 = 3/4
    # Definition 15: mu/l_div = 2/(2 sqrt 2) = 1/sqrt 2, 3/2, 1/sqrt 2;
    #                mu*t_clo = 3/2, 3, 3/2.
    want = WORKED["definition15"]
    gender, race = _hierarchies()
    um = UnifiedMetric(want["metric"], [gender, race])
    qg, qr = _QI(gender, um.to_root[0]), _QI(race, um.to_root[1])
    cls = [("F", "Lion"), ("F", "Dog"), ("M", "Cat"), ("M", "Lion")]
    gs = np.array([gender.leaf(c[0]) for c in cls])
    rs = np.array([race.leaf(c[1]) for c in cls])
    mu = qg.cost(gs[0], gs[1:]) + qr.cost(rs[0], rs[1:])
    assert mu == pytest.approx([F(x) for x in want["mu"]], rel=1e-12)

    classes = [want["class"], *want["merged_with"]]
    counts = np.vstack([_counts(records) for records in classes])
    ctx = _Context(
        s=0,
        cand=np.array([1, 2, 3]),
        cost=mu,
        counts=counts,
        sizes=np.full(4, 2.0),
        n=8,
        overall=OVERALL,
        xlogx=_xlogx(counts).sum(axis=1),
    )
    idx = np.array([1, 2, 3])
    ldiv = ctx.ldiv(idx)
    tclo = ctx.tclo(idx)

    def numbers(key):
        return [papers.number(x) for x in want[key]]

    assert ldiv == pytest.approx(numbers("l_div"), rel=1e-12)
    assert tclo == pytest.approx(numbers("t_clo"), rel=1e-12)
    assert mu / ldiv == pytest.approx(numbers("mu_over_l_div"), rel=1e-12)
    assert mu * tclo == pytest.approx(numbers("mu_times_t_clo"), rel=1e-12)
