"""SafePub against ARX's own test cases on Adult (``TestAnonymizationDifferentialPrivacy``,
github.com/arx-deidentifier/arx, commit aacd487fb, the commit ``../shared/data/adult`` was
copied from). ARX's tests run with ``deterministic = true``: the sample is drawn with Java's
``new Random(0xDEADBEEF)`` (``nextDouble() < beta`` for each record in file order). The
generator is reproduced here (Java's documented linear congruential generator) for the tests
only, the sample written to the engine, and anonsql's own code takes it from there:

* the data-independent cases (fixed generalization): anonsql's beta and k and the release's
  Loss (ARX's ``getHighestScore``) reproduce ARX's expected values exactly (ARX's k is the
  smallest k whose bound holds, plus one: :mod:`anonsql.algorithms.dp.params`);
* the data-dependent cases: the score of ARX's expected transformation, computed by
  anonsql's score functions in the engine, equals ARX's expected score for loss, precision,
  entropy, AECS and discernibility (ARX counts the records left out by sampling as
  suppressed: a constant per case, added back here). The transformations themselves are
  random draws of ARX's mechanism and cannot be compared.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from anonsql.algorithms.dp.engine import SampleScorer
from anonsql.algorithms.dp.params import safepub_parameters
from anonsql.algorithms.dp.quality import ScoreContext, arx_loss, score, sensitivity
from anonsql.database import Database
from tests.helpers import papers
from tests.helpers.data import shared_data

QIS = [
    "sex", "age", "race", "marital-status", "education", "native-country", "workclass",
    "occupation", "salary-class",
]  # fmt: skip


class JavaRandom:
    """java.util.Random: 48-bit LCG (multiplier 0x5DEECE66D, addend 11), as its Javadoc
    specifies; nextDouble from 26 + 27 bits."""

    MASK = (1 << 48) - 1

    def __init__(self, seed: int) -> None:
        self.state = (seed ^ 0x5DEECE66D) & self.MASK

    def _next(self, bits: int) -> int:
        self.state = (self.state * 0x5DEECE66D + 0xB) & self.MASK
        return self.state >> (48 - bits)

    def next_double(self) -> float:
        return ((self._next(26) << 27) + self._next(27)) * 2.0**-53


def arx_sample(n: int, beta: float) -> np.ndarray:
    r = JavaRandom(-559038737)  # Java's int literal 0xDEADBEEF, widened to long
    return np.array([r.next_double() < beta for _ in range(n)])


@pytest.fixture(scope="module")
def adult(tmp_path_factory):
    data = shared_data() / "adult"
    from anonsql.hierarchy.loaders import read_arx_csv

    db = Database.open(str(tmp_path_factory.mktemp("arx") / "adult.duckdb"))
    frame = pd.read_csv(data / "adult.csv", sep=";", dtype=str)
    db.backend.write_frame("adult", frame)
    for c in QIS:
        db.hierarchies.save(read_arx_csv(c, data / f"adult_hierarchy_{c}.csv"))
    keys = [db.hierarchies.pin(c) for c in QIS]
    hs = [db.hierarchies.load(k) for k in keys]
    yield db, frame, keys, [h.top_level for h in hs], [len(h.leaf_ids) for h in hs]
    db.close()


def _scorer(adult, eps_anon_params):
    db, frame, keys, tops, _leaves = adult
    sampled = arx_sample(len(frame), eps_anon_params.beta)
    db.backend.write_frame("arx_sample", frame[sampled].reset_index(drop=True))
    scorer = SampleScorer(db, QIS, keys, tops)
    scorer.prepare("arx_sample", "error")
    return scorer, int((~sampled).sum()), len(frame)


# ARX's data-independent Adult cases: epsilon, delta, levels (GeneralizationDegree), Loss
# (tests/fixtures/papers/safepub/data_independent.csv; ln(2) is math.log(2))
INDEPENDENT = [
    (
        papers.number(r["epsilon"]),
        float(r["delta"]),
        list(papers.levels(r["levels"])),
        float(r["loss"]),
    )
    for r in papers.rows("safepub", "data_independent.csv")
]


@pytest.mark.parametrize("eps,delta,levels,expected", INDEPENDENT)
def test_data_independent_cases_give_arx_loss(adult, eps, delta, levels, expected):
    p = safepub_parameters(eps, delta, 0.0)
    scorer, _, _ = _scorer(adult, p)
    try:
        agg = scorer.aggregates([tuple(levels)], p.k)[0]
        ctx = ScoreContext("loss", p.k, len(QIS), tuple(adult[4]), tuple(adult[3]), 0)
        loss, _ = arx_loss(agg, ctx)
    finally:
        scorer.close()
    assert loss == pytest.approx(expected, rel=1e-12, abs=1e-15)


# ARX's data-dependent Adult cases (epsilon 2, search budget 1, delta 1e-5): metric, levels
# of ARX's expected transformation, ARX's expected score
# (tests/fixtures/papers/safepub/data_dependent.csv)
DEPENDENT = [
    (r["metric"], list(papers.levels(r["levels"])), float(r["score"]))
    for r in papers.rows("safepub", "data_dependent.csv")
]


@pytest.fixture(scope="module")
def dependent_scorer(adult):
    p = safepub_parameters(2.0, 1e-5, 0.5)  # ARX: epsilon 2, search budget 1 (absolute)
    scorer, unsampled, n = _scorer(adult, p)
    yield p, scorer, unsampled, n
    scorer.close()


@pytest.mark.parametrize("metric,levels,expected", DEPENDENT)
def test_data_dependent_scores_are_arx_scores(adult, dependent_scorer, metric, levels, expected):
    p, scorer, unsampled, n = dependent_scorer
    ctx = ScoreContext(metric, p.k, len(QIS), tuple(adult[4]), tuple(adult[3]), n)
    agg = scorer.aggregates([tuple(levels)], p.k, entropy=metric == "entropy")[0]
    # ARX counts the records left out by sampling as suppressed (a constant of the case)
    m = len(QIS)
    offset = {
        "loss": Fraction(-m * unsampled),
        "precision": Fraction(-m * unsampled),
        "entropy": Fraction(-m * unsampled * n),
        "dm": Fraction(-n * unsampled),
        "aecs": Fraction(0 if agg.any_suppressed or not unsampled else 1),
    }[metric]
    got = score(agg, ctx) + float(offset / sensitivity(ctx))
    assert got == pytest.approx(expected, rel=1e-12)
