"""The table the engine tests compare DuckDB, PostgreSQL and Spark on (``people``: 400 rows
of age, sex, zip and a disease), its hierarchies, and the runs they compare."""

from __future__ import annotations

import numpy as np
import pandas as pd

from anonsql.database import Database
from anonsql.hierarchy import builders
from anonsql.spec import Spec

#: the test JVMs' options (the local Spark session's driver, the Spark Connect server): a
#: test session lives minutes and runs small statements, so the JIT's first tier only (no
#: time spent compiling hot code for a peak that is never reached) and the serial
#: collector. The first tier alone shrinks the default code cache to 48 MB, which Spark's
#: generated classes fill within a test file; the JIT then stops for the rest of the
#: session and method-handle calls fail ("Out of space in CodeCache"), so the tiered
#: default's 240 MB is kept
TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m -XX:+UseSerialGC"

#: the test sessions' SQL settings: the engine tests' tables have hundreds of rows, so one
#: shuffle partition, no adaptive execution (it re-plans every stage of every statement from
#: the last one's statistics) and no whole-stage code generation (every new statement's
#: plan is compiled to Java first): fixed costs per statement that tiny inputs never pay
#: back. Together a quarter less time in the Spark tests; a user's session keeps Spark's
#: defaults (anonsql.backend.spark_backend.local_session)
TEST_SQL_CONF = {
    "spark.sql.shuffle.partitions": "1",
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.codegen.wholeStage": "false",
}

QIS = ["age", "sex", "zip"]
COLUMNS = ["id", "age", "sex", "zip", "disease"]  # people()'s


def roles(qis=QIS, sensitive: str | None = None) -> dict:
    """The other columns' roles for a run on people(): every column that is neither a QI nor
    the sensitive attribute is released as it is. 'id' is the tests' row key (the outputs
    are compared row by row), published on purpose although it is unique."""
    keep = [c for c in COLUMNS if c not in qis and c != sensitive]
    return {"keep": keep, "allow_identifying": ["id"]}


def people(n: int = 400, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "id": np.arange(n),
            "age": rng.integers(20, 60, n),
            "sex": rng.choice(["m", "f"], n),
            "zip": rng.choice(["13053", "13068", "14850", "14853", "14867"], n),
            "disease": rng.choice(["flu", "cancer", "hiv", "gastritis"], n, p=[0.5, 0.2, 0.2, 0.1]),
        }
    )


def setup(db: Database, frame: pd.DataFrame, name: str = "people", cols=None) -> None:
    cols = cols or {q: q for q in QIS}
    db.backend.write_frame(name, frame)
    # as `anonsql hierarchy load-dir` stores them: in one transaction (on Spark, the
    # hierarchy tables are then copied once for the three, not three times)
    with db.backend.transaction():
        db.hierarchies.save(builders.intervals("age", range(20, 60), [5, 10, 20]), cols["age"])
        db.hierarchies.save(builders.flat("sex", ["m", "f"]), cols["sex"])
        db.hierarchies.save(builders.mask("zip", sorted(frame[cols["zip"]].unique())), cols["zip"])


def output_rows(db: Database, name: str) -> pd.DataFrame:
    df = db.backend.fetch_df(f"SELECT * FROM {name}")
    df = df.astype(str)
    return df.sort_values(list(df.columns)).reset_index(drop=True)


def summary(result) -> tuple:
    m = result.measures
    return (result.levels, m["classes"], m["suppressed_rows"], round(result.score, 12))


SPECS = [
    Spec(qis=QIS, k=5, suppression=0.0, output="out", **roles()),
    Spec(
        qis=QIS,
        sensitive="disease",
        k=4,
        l=2,
        suppression=0.05,
        output="out",
        **roles(sensitive="disease"),
    ),
    Spec(
        qis=QIS,
        sensitive="disease",
        k=3,
        t=0.3,
        suppression=0.1,
        output="out",
        metric="aecs",
        **roles(sensitive="disease"),
    ),
]


__all__ = ["COLUMNS", "QIS", "SPECS", "output_rows", "people", "roles", "setup", "summary"]
