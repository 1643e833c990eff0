"""SafePub on the server engines (issue 32): the sample drawn by the engine's SHA-256 (the
PostgreSQL and Spark overrides of ``sql/dp/draw_sample.sql``), the candidates scored by the
engine, the release a view over the stored sample with every class of at least k."""

from __future__ import annotations

import json

import pandas as pd

from anonsql.run import anonymize
from anonsql.spec import Spec

QIS = ["age", "zip"]


def _load(db) -> None:
    import numpy as np

    rng = np.random.default_rng(3)
    n = 1500
    frame = pd.DataFrame(
        {
            "age": rng.integers(20, 60, n).astype(str),
            "zip": rng.choice(["1001", "1002", "1003", "2001", "2002"], n),
        }
    )
    db.backend.write_frame("people", frame)
    from anonsql.hierarchy.hierarchy import Hierarchy

    ages = [str(a) for a in range(20, 60)]
    db.hierarchies.save(
        Hierarchy.from_rows("age", [[a, f"{int(a) // 10 * 10}s", "*"] for a in ages])
    )
    zips = ["1001", "1002", "1003", "2001", "2002"]
    db.hierarchies.save(Hierarchy.from_rows("zip", [[z, z[0] + "***", "*"] for z in zips]))


def test_release_on_server_engines(engine):
    db = engine()
    _load(db)
    spec = Spec(
        qis=QIS, columns=QIS, algorithm="safepub", dp_epsilon=2.0, dp_delta=1e-4, dp_steps=3,
        output="people_dp", seed=5,
    )  # fmt: skip
    r = anonymize(db, "people", spec)
    params = json.loads(
        db.backend.fetchall(f"SELECT parameters FROM anonsql_runs WHERE run_id = {r.run_id}")[0][0]
    )["dp"]
    k, sample = params["k"], params["sample"]
    n = int(db.backend.fetchall(f"SELECT COUNT(*) FROM {sample}")[0][0])
    beta = params["beta"]
    assert abs(n - 1500 * beta) < 5 * (1500 * beta * (1 - beta)) ** 0.5
    sizes = [
        int(s) for (s,) in db.backend.fetchall("SELECT COUNT(*) FROM people_dp GROUP BY age, zip")
    ]
    assert all(s >= k for s in sizes)
    assert sum(sizes) <= n
    assert db.backend.fetchall("SELECT COUNT(*) FROM people_dp")[0][0] == sum(sizes)
