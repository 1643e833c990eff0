"""ARX's own expected optima on Adult (issue 13): the cases of ARX's ``TestAnonymization*``
classes whose privacy models and quality models anonsql supports, run through anonsql's default
(exact) search. Skipped with a reason when ``../shared/data`` is absent.

Source: github.com/arx-deidentifier/arx, ``src/test/org/deidentifier/arx/test/``, commit
aacd487fb (the commit ``../shared/data/adult`` was copied from). Each case is ARX's
``ARXAnonymizationTestCase``: suppression limit, quality model, privacy models, sensitive
attribute, expected score (``getHighestScore()``), expected transformation (``null``: no
solution) and whether ARX assumed "practical monotonicity". As in ARX's ``getDataObject``,
every Adult column with a hierarchy is a QI except the sensitive attribute when an
l-diversity, t-closeness or beta-likeness model names it (it is then sensitive); with
k-anonymity alone it is left out (8 QIs). ``TestAnonymizationTCloseness`` adds hierarchical
0.2-closeness to every case that has no t-closeness model (its ``test()`` override); the
cases below include it. ARX's quality models map to anonsql's: precomputed non-uniform
entropy, monotone -> ``entropy``, non-monotone -> ``entropy-nm``; discernability, monotone
(DM*) -> ``dm-star``; Loss (gsFactor 0.5) -> ``loss``.

The 53 supported cases: same score (relative 1e-12; ARX's doubles are summed in another
order) and the same transformation or one that ARX's scores the same (a tie), the same "no
solution" answers, except three that differ, each for a stated reason (:data:`DIFFERENCES`).

Adult cases not reproduced (their model or setting is not in anonsql): d-presence (12 in
``TestAnonymizationDPresence``, 15 in ``TestAnonymizationCombinations``), k-map (14),
differential privacy (23), profitability / game-theoretic models (6), risk-based models
(average re-identification risk, sample and population uniqueness: 6), research subsets
(``Inclusion``, 4), local recoding (7; ARX compares hash codes of its output rows), and ARX's
heuristic searches (Lightning, top-down, genetic: 18; their expected values are what those
heuristics found, not optima; ``benchmarks/bench_heuristic.py`` compares them with anonsql's
heuristic). The cup, fars, atus and ihis cases need data sets ARX does not publish.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from anonsql.data.histogram import Histogram
from anonsql.data.partition import Partition
from anonsql.metrics.quality import quality_model
from anonsql.models import (
    BasicBetaLikeness,
    EnhancedBetaLikeness,
    EntropyLDiversity,
    EqualDistanceEMD,
    GrassbergerEntropyLDiversity,
    HierarchicalEMD,
    KAnonymity,
    OrderedDistanceEMD,
    PrivacyModel,
    RecursiveCLDiversity,
)
from anonsql.models.l_diversity import grassberger_g
from anonsql.models.requirements import Requirements
from anonsql.search import Flash
from tests.conftest import ADULT_QIS, shared_data

# ARX's cases per test class (``TestAnonymization<name>``), one line each: the index in the
# class's ``cases()``, suppression limit, quality model, privacy models, QIs (9: all Adult
# columns; 8: all but occupation, which is then sensitive or, with k-anonymity alone, left
# out), expected score, expected transformation (none: no solution), P where ARX assumed
# practical monotonicity
ARX_CASES = {
    "BLikeness": """
0   0.5  loss       basic-beta=3               8 0.34883856157237925  0,3,0,0,2,0,1,0   -
1   0.0  loss       enhanced-beta=2            8 0.759176305345683    1,4,1,1,3,2,2,0   -
2   1.0  loss       basic-beta=1               8 0.6081345989904172   1,4,0,1,3,0,2,0   -
3   1.0  loss       enhanced-beta=10           8 0.3419039849540606   0,3,0,0,3,1,2,0   -
4   0.4  loss       basic-beta=5               8 0.23350465152356303  0,2,0,0,2,0,1,0   -
5   1.0  loss       enhanced-beta=10           8 0.3419039849540606   0,3,0,0,3,1,2,0   -
""",
    "Combinations": """
3   0.0  entropy    k=5;hierarchical-emd=0.2   8 398400.0741806447    0,4,1,1,3,2,2,1   -
4   0.0  entropy    k=5                        8 324620.5269918692    1,1,1,1,3,2,2,1   -
6   0.0  entropy    hierarchical-emd=0.2       8 398400.0741806447    0,4,1,1,3,2,2,1   -
8   0.0  entropy    recursive-l=5,c=4.0        8 324620.5269918692    1,1,1,1,3,2,2,1   -
45  0.05 entropy-nm k=5                        8 180132.40848244698   0,0,1,1,2,2,2,0   -
52  0.05 entropy    k=5;hierarchical-emd=0.2   8 367390.5779876774    1,4,0,0,3,1,2,1   -
54  0.05 entropy    recursive-l=5,c=4.0        8 198181.4042332967    1,0,1,1,2,2,2,0   -
77  0.05 entropy-nm k=5;hierarchical-emd=0.2   8 374778.01889889664   1,4,0,0,3,1,2,1   -
79  0.05 entropy-nm recursive-l=5,c=4.0        8 209764.96161974416   1,0,1,1,2,2,2,0   -
102 0.05 entropy    hierarchical-emd=0.2       8 367390.5779876774    1,4,0,0,3,1,2,1   -
117 0.05 entropy-nm hierarchical-emd=0.2       8 374778.01889889664   1,4,0,0,3,1,2,1   -
""",
    "EntropyLDiversity": """
0   0.04 entropy-nm entropy-l=5,grassberger    8 216092.124036387     1,0,1,0,3,2,2,0   -
1   0.04 entropy-nm entropy-l=100              8 0.0                  none              -
2   0.0  entropy-nm entropy-l=5,grassberger    8 324620.5269918692    1,1,1,1,3,2,2,1   -
3   0.05 entropy-nm entropy-l=3,grassberger    8 180347.4325366015    0,0,1,1,2,2,2,0   -
4   0.04 entropy-nm entropy-l=5                8 228878.2039109517    1,0,1,1,2,2,2,1   P
5   0.1  entropy-nm entropy-l=100,grassberger  8 0.0                  none              P
""",
    "KAnonymity": """
0   0.04 entropy    k=5                        9 255559.85455731067   1,0,1,1,3,2,2,0,1 -
1   0.04 entropy    k=100                      9 379417.3460570988    1,1,1,1,3,2,2,1,1 -
2   0.0  entropy    k=5                        9 407289.5388925293    1,2,1,1,3,2,2,1,1 -
3   0.0  entropy    k=100                      9 453196.8932458743    0,4,1,1,3,2,2,1,1 -
4   0.04 entropy    k=5                        9 255559.85455731067   1,0,1,1,3,2,2,0,1 P
5   0.04 entropy    k=100                      9 379417.3460570988    1,1,1,1,3,2,2,1,1 P
""",
    "LDiversity": """
0   0.04 entropy-nm entropy-l=5                8 228878.2039109517    1,0,1,1,2,2,2,1   -
1   0.04 entropy-nm entropy-l=100              8 0.0                  none              -
2   0.0  entropy-nm entropy-l=5                8 324620.5269918692    1,1,1,1,3,2,2,1   -
3   0.0  entropy-nm entropy-l=100              8 0.0                  none              -
4   0.04 entropy-nm entropy-l=5                8 228878.2039109517    1,0,1,1,2,2,2,1   P
5   0.04 entropy-nm entropy-l=100              8 0.0                  none              P
""",
    "OrderedDistanceTCloseness": """
0   0.04 dm-star    ordered-emd=0.2;k=5        8 2712340.0            0,0,1,1,2,2,2,0   -
1   0.04 dm-star    ordered-emd=0.2;k=100      8 19937246.0           1,0,1,2,3,2,2,1   -
2   0.0  dm-star    ordered-emd=0.1;k=5        8 97868020.0           1,1,1,2,3,2,2,1   -
3   0.0  dm-star    ordered-emd=0.2;k=100      8 162312130.0          1,4,1,1,1,2,2,1   -
4   0.04 dm-star    ordered-emd=0.05;k=5       8 201413138.0          1,4,1,0,3,2,2,0   P
5   0.04 dm-star    ordered-emd=0.2;k=100      8 19937246.0           1,0,1,2,3,2,2,1   P
""",
    "TCloseness": """
0   0.04 dm-star    equal-emd=0.2;k=5          8 311880088.0          1,4,1,0,3,2,2,1   -
1   0.04 dm-star    equal-emd=0.2;k=100        8 311880088.0          1,4,1,0,3,2,2,1   -
2   0.04 entropy    k=5;hierarchical-emd=0.2   8 377622.78458729305   1,4,0,0,3,2,2,1   -
3   0.04 entropy    k=100;hierarchical-emd=0.2 8 390765.61326019815   1,4,1,0,3,1,2,1   -
4   0.0  dm-star    equal-emd=0.2;k=5          8 456853172.0          1,4,1,1,3,2,2,1   -
5   0.0  dm-star    equal-emd=0.2;k=100        8 456853172.0          1,4,1,1,3,2,2,1   -
6   0.0  entropy    k=5;hierarchical-emd=0.2   8 398400.0741806447    0,4,1,1,3,2,2,1   -
7   0.0  entropy    k=100;hierarchical-emd=0.2 8 398400.0741806447    0,4,1,1,3,2,2,1   -
8   0.04 dm-star    equal-emd=0.2;k=5          8 311880088.0          1,4,1,0,3,2,2,1   P
9   0.04 dm-star    equal-emd=0.2;k=100        8 311880088.0          1,4,1,0,3,2,2,1   P
10  0.04 entropy    k=5;hierarchical-emd=0.2   8 390765.61326019815   1,4,1,0,3,1,2,1   P
11  0.04 entropy    k=100;hierarchical-emd=0.2 8 390765.61326019815   1,4,1,0,3,1,2,1   P
""",
}


def _cases() -> list[tuple]:
    out = []
    for cls, table in ARX_CASES.items():
        for line in table.strip().splitlines():
            idx, limit, metric, models, qis, score, levels, practical = line.split()
            out.append(
                (
                    f"{cls}-{idx}",
                    float(limit),
                    metric,
                    models,
                    "occupation" if qis == "8" else None,
                    float(score),
                    None if levels == "none" else tuple(int(x) for x in levels.split(",")),
                    practical == "P",
                )
            )
    return out


CASES = _cases()

#: cases where anonsql's answer differs from ARX's, and why (each is checked for its reason)
DIFFERENCES = {
    # ARX's EntropyLDiversity aborts its sum over a class's values as soon as a partial sum
    # exceeds N (G(N) - ln l); with the Grassberger estimator G(1) < 0, so a later singleton
    # could have brought it back under: the verdict depends on ARX's hash order, and ARX fails
    # classes the definition passes. anonsql applies the definition (the full sum), finds more
    # classes passing and a better optimum. Checked: anonsql's optimum <= ARX's <= the optimum
    # when every class fails whose positive terms alone exceed the bound (the worst order).
    "EntropyLDiversity-0": "grassberger order",
    "EntropyLDiversity-3": "grassberger order",
    # ARX's practical monotonicity (assume every model monotone with suppression) lost the
    # optimum: with the same settings and no assumption (TCloseness-2) ARX itself finds
    # 377,622.78, which anonsql's exact search returns here too. Checked: ARX's transformation
    # is anonymous in anonsql and scores ARX's figure, and anonsql's is better.
    "TCloseness-10": "practical monotonicity",
}


def build_models(spec: str, occupation) -> list[PrivacyModel]:
    models: list[PrivacyModel] = []
    for item in spec.split(";"):
        name, value = item.split("=", 1)
        if name == "k":
            models.append(KAnonymity(int(value)))
        elif name == "entropy-l" and value.endswith(",grassberger"):
            models.append(GrassbergerEntropyLDiversity(float(value.split(",")[0])))
        elif name == "entropy-l":
            models.append(EntropyLDiversity(float(value)))
        elif name == "recursive-l":
            l_value, c = value.split(",c=")
            models.append(RecursiveCLDiversity(int(l_value), float(c)))
        elif name == "equal-emd":
            models.append(EqualDistanceEMD(float(value)))
        elif name == "ordered-emd":
            models.append(OrderedDistanceEMD(float(value)))
        elif name == "hierarchical-emd":
            models.append(HierarchicalEMD(float(value), occupation))
        elif name == "basic-beta":
            models.append(BasicBetaLikeness(float(value)))
        elif name == "enhanced-beta":
            models.append(EnhancedBetaLikeness(float(value)))
        else:
            raise AssertionError(item)
    return models


class WorstOrderGrassberger(GrassbergerEntropyLDiversity):
    """Grassberger entropy l-diversity as ARX's early abort decides it in the worst order of
    a class's values: the class fails when the sum of its positive terms n G(n) alone exceeds
    N (G(N) - ln l) (every order ARX may use fails no fewer classes than the definition and
    no more than this)."""

    def class_values(self, stats):
        values = super().class_values(stats)
        terms = stats.pair_count * grassberger_g(stats.pair_count)
        positive = np.bincount(stats.pair_class, np.maximum(terms, 0.0), minlength=stats.classes)
        n = np.maximum(stats.sizes, 1)
        bound = stats.sizes * (grassberger_g(n) - math.log(self.l))
        return np.where(positive > bound, 0.0, values)


@pytest.fixture(scope="module")
def adult():
    """Adult and its nine ARX hierarchies, and a cache of histograms and search results."""
    from anonsql.hierarchy.loaders import read_arx_csv

    folder = shared_data() / "adult"
    df = pd.read_csv(folder / "adult.csv", sep=";", dtype=str)
    hs = {c: read_arx_csv(c, folder / f"adult_hierarchy_{c}.csv") for c in ADULT_QIS}
    return df, hs, {}, {}


def _setup(adult, case):
    df, hs, cache, _ = adult
    _, limit, metric, models, sensitive, _, _, _ = case
    built = build_models(models, hs["occupation"])
    # ARX's getDataObject: the sensitive attribute is a QI never; it is sensitive only when a
    # model needs it
    needs = any(m.needs_sensitive for m in built)
    qis = [q for q in ADULT_QIS if q != sensitive]
    key = (tuple(qis), sensitive if needs else None)
    if key not in cache:
        cache[key] = Histogram.from_frame(df, qis, [hs[q] for q in qis], key[1])
    hist = cache[key]
    req = Requirements(built, limit, hs["occupation"] if needs else None)
    return hist, req, metric


def _score(hist: Histogram, req: Requirements, metric: str, levels) -> tuple[bool, float]:
    """Whether ``levels`` is anonymous in anonsql, and its score."""
    part = Partition.from_histogram(hist, tuple(levels))
    a = req.assess(part, hist)
    q = quality_model(metric)
    q.prepare(hist)
    return a.anonymous, q.score(part, a.suppressed)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_arx_expected_optimum(adult, case):
    name, limit, metric, models, sensitive, score, levels, _ = case
    hist, req, metric = _setup(adult, case)
    # several cases differ only in ARX's practical-monotonicity flag, which the exact search
    # does not read: each setting is searched once
    runs = adult[3]
    key = (limit, metric, models, sensitive)
    if key not in runs:
        runs[key] = Flash(frontier=False).run(hist, req, quality_model(metric))
    result = runs[key]
    got = result.optimum
    if levels is None:
        assert got is None, got
        return
    assert got is not None, result.guarantee
    reason = DIFFERENCES.get(name)
    if reason is None:
        assert got.score == pytest.approx(score, rel=1e-12)
        if got.levels != levels:  # a tie: ARX's transformation scores the same here
            anonymous, theirs = _score(hist, req, metric, levels)
            assert anonymous and theirs == pytest.approx(got.score, rel=1e-12), (got, levels)
    elif reason == "practical monotonicity":
        anonymous, theirs = _score(hist, req, metric, levels)
        assert anonymous and theirs == pytest.approx(score, rel=1e-12)
        assert got.score < score
        twin = next(c for c in CASES if c[0] == "TCloseness-2")  # same settings, exact in ARX
        assert got.score == pytest.approx(twin[5], rel=1e-12)
    elif reason == "grassberger order":
        assert got.score < score
        worst = Requirements(
            [WorstOrderGrassberger(m.l) for m in req.models], req.suppression_limit
        )
        bound = Flash(frontier=False).run(hist, worst, quality_model(metric)).optimum
        assert score <= bound.score
    else:
        raise AssertionError(reason)
