"""The release computed for all partitions at once (:mod:`anonsql.algorithms.mondrian.release`)
equals the partition-by-partition release it replaced (kept in tests/helpers/partition.py):
the same recoding rows (original values, labels, node ids, in the same order), the same
classes and the same figures, on random tables of numeric, categorical and hierarchy QIs cut
into random partitions, whether the partitions come as a list (the in-memory path) or as each
row's partition number (the engine's path, numbers with gaps)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonsql.algorithms.mondrian.driver import (
    Partitioning,
    make_checker,
    measures,
    partitions_of,
)
from anonsql.algorithms.mondrian.release import (
    _sequence_ranks,
    part_of_rows,
    partition_keys,
    release,
)
from anonsql.data.points import Points
from anonsql.hierarchy.hierarchy import Hierarchy
from anonsql.models.goal import build_models
from anonsql.spec import Spec
from tests.helpers.partition import reference_measures, reference_release

LEAVES = list("abcdefgh")


@st.composite
def hierarchies(draw) -> Hierarchy:
    """A random hierarchy over LEAVES: 2-4 levels, each level's labels grouped at random
    under the next one's, one root."""
    depth = draw(st.integers(1, 3))  # levels above the leaves, the root included
    paths = [[leaf] for leaf in LEAVES]
    for lv in range(1, depth):
        below = sorted({p[-1] for p in paths})
        parent = {b: f"L{lv}_{draw(st.integers(0, 2))}" for b in below}
        for p in paths:
            p.append(parent[p[-1]])
    for p in paths:
        p.append("*")
    return Hierarchy.from_rows("h", paths)


@st.composite
def cases(draw):
    """Points of a random table (1-3 QIs, a sensitive column: several histogram rows per QI
    tuple) and each distinct QI tuple's random partition."""
    n = draw(st.integers(1, 50))
    m = draw(st.integers(1, 3))
    cols: dict[str, list] = {}
    hs: list[Hierarchy | None] = []
    for j in range(m):
        kind = draw(st.sampled_from(["numeric", "categorical", "hierarchy"]))
        if kind == "numeric":
            cols[f"q{j}"] = draw(st.lists(st.integers(-5, 12), min_size=n, max_size=n))
            hs.append(None)
        else:
            cols[f"q{j}"] = draw(st.lists(st.sampled_from(LEAVES), min_size=n, max_size=n))
            hs.append(draw(hierarchies()) if kind == "hierarchy" else None)
    cols["s"] = draw(st.lists(st.sampled_from("xyz"), min_size=n, max_size=n))
    qis = [f"q{j}" for j in range(m)]
    points = Points.from_frame(pd.DataFrame(cols), qis, hs, "s")
    tuples = int(points.tuple_ids.max()) + 1
    count = draw(st.integers(1, tuples))
    # every partition gets a tuple, the others go anywhere: rows of one tuple stay together
    of_tuple = np.asarray(
        draw(st.permutations(range(tuples)))[:count]
        + draw(
            st.lists(st.integers(0, count - 1), min_size=tuples - count, max_size=tuples - count)
        )
    )
    of_tuple = np.asarray(draw(st.permutations(of_tuple.tolist())), dtype=np.int64)
    return points, qis, of_tuple[points.tuple_ids]


def _same(got, want) -> None:
    (rec, cls), (ref, ref_cls) = got, want
    assert rec.rows() == ref.rows()
    assert np.array_equal(cls, ref_cls)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.integers(0, 2**31 - 1))
def test_release_equals_partition_by_partition(case, seed):
    """Both callers' forms: a list of partitions (rows in any order inside each) and each
    row's partition number (numbers with gaps, in any order); and the figures."""
    points, qis, part = case
    rng = np.random.default_rng(seed)
    # the engine's numbers: increasing with the partition, with gaps
    numbers = np.cumsum(rng.integers(1, 5, int(part.max()) + 1))
    engine_part = numbers[part]
    parts = partitions_of(engine_part)
    want = reference_release(points, parts)
    _same(release(points, engine_part), want)
    # the in-memory list: its order, each partition's rows shuffled
    listed = [rng.permutation(p) for p in parts]
    keys = partition_keys(points, part_of_rows(len(points.counts), listed))
    _same(release(points, keys.part, keys), want)
    checker = make_checker(points, build_models(Spec(qis=qis, sensitive="s", k=1), None))
    groups = [np.arange(len(points.counts))]
    result = Partitioning(groups, keys, *want, np.zeros(len(points.counts), np.int64))
    assert measures(points, result, checker) == reference_measures(
        points, groups, listed, want[1], checker
    )


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.lists(st.integers(0, 4), max_size=6).map(lambda v: sorted(set(v))), max_size=30
    ).filter(lambda seqs: all(seqs))
)
def test_sequence_ranks_as_tuples_sort(seqs):
    """The ranks sort the sequences as Python sorts tuples (a prefix first), equal ones equal."""
    lengths = np.asarray([len(s) for s in seqs], dtype=np.int64)
    firsts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    values = np.asarray([v for s in seqs for v in s], dtype=np.int64)
    ranks = _sequence_ranks(values, firsts, lengths).tolist()
    tuples = [tuple(s) for s in seqs]
    assert ranks == [sum(u < t for u in tuples) for t in tuples]


def test_partitions_must_cover_every_row_once():
    import pytest

    with pytest.raises(AssertionError):
        part_of_rows(3, [np.asarray([0, 1])])
    with pytest.raises(AssertionError):
        part_of_rows(3, [np.asarray([0, 1, 2]), np.asarray([], dtype=np.int64)])
    with pytest.raises(AssertionError):
        part_of_rows(2, [np.asarray([0, 1]), np.asarray([1])])


def test_stored_recodings_are_the_row_lists(monkeypatch):
    """What a Mondrian run stores in ``anonsql_recodings`` on DuckDB, written from Arrow list
    columns built from the recoding's flat columns, is what the frame of Python lists (the
    row-wise recoding) stores: the same values, types and order. A table of numeric,
    categorical and hierarchy QIs, with a NULL-free value set of a few hundred tuples."""
    import anonsql.algorithms.recoding as recoding
    from tests.helpers.partition import db_of, run_on

    rng = np.random.default_rng(7)
    n = 600
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 70, n),
            "zip": [f"z{v:02d}" for v in rng.integers(0, 25, n)],
            "job": rng.choice(list("abcdefgh"), n),
            "s": rng.choice(list("xyzw"), n),
            "rid": np.arange(n),
        }
    )
    job = Hierarchy.from_rows("job", [[v, "ab" if v < "c" else "c-h", "*"] for v in "abcdefgh"])

    def stored() -> list[tuple]:
        db = db_of(frame)
        db.hierarchies.save(job)
        run_on(db, qis=["age", "zip", "job"], sensitive="s", k=4, l=2, keep=["rid"],
               allow_identifying=["rid"])  # fmt: skip
        return db.backend.fetchall(
            "SELECT output, run_id, original, generalized, nodes, typeof(original), "
            "typeof(generalized), typeof(nodes) FROM anonsql_recodings"
        )

    columnar = stored()
    monkeypatch.setattr(recoding, "recoding_table", recoding.recoding_lists)
    lists = stored()
    assert len(columnar) > 100 and columnar == lists
