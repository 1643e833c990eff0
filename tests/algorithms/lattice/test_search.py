"""The lattice search: ARX's optima on Adult, and flash == exhaustive on random tables."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonsql.algorithms.lattice.lattice import Lattice
from anonsql.algorithms.lattice.searches import Exhaustive, Flash
from anonsql.data.histogram import Histogram
from anonsql.database import Database
from anonsql.errors import InputError
from anonsql.metrics.quality import quality_model
from anonsql.models import (
    DistinctLDiversity,
    EntropyLDiversity,
    EqualDistanceEMD,
    KAnonymity,
    OrderedDistanceEMD,
)
from anonsql.models.requirements import Requirements
from anonsql.run import anonymize
from anonsql.spec import Spec
from tests.helpers import papers
from tests.helpers.data import ADULT_QIS, load_adult
from tests.helpers.strategies import anonymization_cases

ADULT = ADULT_QIS


@pytest.fixture(scope="module")
def adult_db():
    db = Database.open(":memory:")
    load_adult(db)
    yield db
    db.close()


# ARX 3.9.2, k = 5, Loss (gsFactor 0.5, geometric mean): ../shared/data/README.md, kept in
# tests/fixtures/papers/arx/adult_k5_loss.csv
ARX = [
    (
        float(r["suppression"]),
        list(papers.levels(r["levels"])),
        int(r["suppressed_rows"]),
        int(r["classes"]),
        float(r["loss"]),
    )
    for r in papers.rows("arx", "adult_k5_loss.csv")
]


@pytest.mark.parametrize(("limit", "levels", "suppressed", "classes", "loss"), ARX)
def test_adult_matches_arx(adult_db, limit, levels, suppressed, classes, loss):
    r = anonymize(adult_db, "adult", Spec(qis=ADULT, k=5, suppression=limit))
    assert list(r.levels.values()) == levels
    assert r.measures["suppressed_rows"] == suppressed
    assert r.measures["classes"] == classes
    if limit == 0:
        assert r.score == loss
    else:
        assert r.score == pytest.approx(loss, abs=5e-5)


def _requirements(draw, with_sensitive: bool):
    models = [KAnonymity(draw(st.integers(1, 4)))]
    if with_sensitive:
        extra = draw(st.sampled_from(["none", "distinct", "entropy", "emd", "ordered"]))
        models += {
            "none": [],
            "distinct": [DistinctLDiversity(2)],
            "entropy": [EntropyLDiversity(1.5)],
            "emd": [EqualDistanceEMD(0.4)],
            "ordered": [OrderedDistanceEMD(0.3)],
        }[extra]
    return Requirements(models, draw(st.sampled_from([0.0, 0.1, 0.3, 1.0])))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(anonymization_cases(max_qis=3, max_rows=40), st.data())
def test_flash_finds_the_exhaustive_optimum(case, data):
    df, hs = case
    qis = [h.name for h in hs]
    hist = Histogram.from_frame(df, qis, hs, "s")
    metric = data.draw(
        st.sampled_from(
            [
                "loss",
                "precision",
                "height",
                "entropy",
                "entropy-nm",
                "aecs",
                "dm",
                "dm-star",
                "nllm",
                "distortion",
            ]
        )
    )
    req = _requirements(data.draw, True)
    ex = Exhaustive().run(hist, req, quality_model(metric))
    fl = Flash(frontier=data.draw(st.booleans())).run(hist, req, quality_model(metric))
    if ex.optimum is None:
        assert fl.optimum is None
        return
    assert fl.optimum is not None
    assert fl.optimum.score == pytest.approx(ex.optimum.score, rel=1e-12, abs=1e-12)
    assert fl.checked <= Lattice(hist.heights).size + 1


def test_lattice_navigation():
    lat = Lattice([2, 3, 2])
    assert lat.size == 12
    node = lat.node([1, 1, 0])
    assert sorted(lat.levels[s].tolist() for s in lat.successors(node)) == [[1, 1, 1], [1, 2, 0]]
    assert lat.above(node).sum() == 4 and lat.below(node).sum() == 4
    with pytest.raises(InputError):
        lat.node([2, 0, 0])


def test_searches_do_not_assume_monotonicity_by_default():
    from anonsql.algorithms.lattice.searches import search

    assert search("flash").assume_monotone is False
    assert search("exhaustive").assume_monotone is False
    assert Flash(assume_monotone=True).assume_monotone is True
