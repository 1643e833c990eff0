"""The SQL of a finished run, for another engine: what ``anonsql transpile`` prints.

A run's output is a self-guarding view (or table) over the source table, the pinned versions
of its hierarchies, for multidimensional recodings its rows in ``anonsql_recodings`` and, for
keyed masks, its tokens in ``anonsql_masks`` (carried by the SHA-256 digest of each value,
never the value). The
script recreates exactly those in the target, keyed so that it never touches another output:
hierarchy versions under their content-addressed keys (equal keys hold equal content, from
any database), recoding rows under the output's name, and the output itself. Deploying many
scripts into one target, or one script twice, changes only the script's own output.

Every statement is generated through sqlglot for the
target dialect (the same templates the backends run); a dialect that cannot express one
(see :mod:`anonsql.backend.dialects`) fails before anything is printed.
"""

from __future__ import annotations

import json
from typing import Any

from sqlglot import exp

from anonsql.backend.base import generate
from anonsql.backend.dialects import check_dialect_name
from anonsql.backend.sql_templates import drop, table, template
from anonsql.database import Database
from anonsql.errors import InputError
from anonsql.hierarchy.store import CLOSURE, NODES
from anonsql.masking.methods import digest, parse_mask
from anonsql.output.materialize import create_statement

# engines where CREATE OR REPLACE cannot replace every view or table (PostgreSQL has no
# OR REPLACE TABLE, and replaces a view only by one with the same leading columns; Spark's
# built-in tables have no REPLACE TABLE): the script drops and creates instead
_DROP_AND_CREATE = {"postgres", "spark", "redshift", "materialize", "risingwave"}
_NO_DELETE = {"spark", "spark2", "hive"}
_TRANSACTIONAL_DDL = {"postgres", "duckdb", "redshift"}


def _run_row(db: Database, run_id: int | None) -> dict[str, Any]:
    be = db.backend
    if not be.table_exists("anonsql_runs"):
        raise InputError("this database has no anonsql runs yet")
    if run_id is None:
        rows = be.fetchall("SELECT MAX(run_id) FROM anonsql_runs WHERE output IS NOT NULL")
        run_id = rows[0][0] if rows and rows[0][0] is not None else None
        if run_id is None:
            raise InputError("no run with an output in this database")
    df = be.fetch_df("SELECT * FROM anonsql_runs WHERE run_id = ?", [int(run_id)])
    if df.empty:
        raise InputError(f"no run {run_id} in this database")
    row = df.iloc[0].to_dict()
    if not row.get("output"):
        raise InputError(f"run {run_id} wrote no output, so there is nothing to deploy")
    return row


def _values_insert(name: str, columns: list[str], rows: list[tuple]) -> exp.Insert:
    values = exp.values([tuple(exp.convert(v) for v in r) for r in rows])
    return exp.insert(values, table(name), columns=columns)


def deployment_statements(db: Database, run_id: int | None, dialect: str) -> list[exp.Expr]:
    """The statements, as sqlglot expressions, that rebuild run ``run_id``'s output."""
    return _statements(db, _run_row(db, run_id), dialect)


def _statements(db: Database, row: dict[str, Any], dialect: str) -> list[exp.Expr]:
    from anonsql.output.writer import run_query

    params = json.loads(row["parameters"])
    if "qi_keys" not in params:
        raise InputError(
            f"run {row['run_id']} was written by an older anonsql without pinned hierarchies; "
            f"run it again"
        )
    output = row["output"]
    run = {
        "run_id": int(row["run_id"]),
        "output": output,
        "source": row["source"],
        "algorithm": row["algorithm"],
        "parameters": params,
        "levels": json.loads(row["levels"]) if row["levels"] else None,
    }

    def t(template_name: str, /, **kw: Any) -> exp.Expr:
        return template(template_name, dialect, **kw)

    out: list[exp.Expr] = [
        t("hierarchy/create_catalog"),
        t("hierarchy/create_node"),
        t("hierarchy/create_closure"),
    ]
    for key in dict.fromkeys(params["hierarchy_keys"]):
        h = db.hierarchies.load(key)
        # a key names one content: replacing its rows by the same rows changes no output
        out += [t(f"hierarchy/{d}", name=key) for d in ("delete_closure", "delete_nodes")]
        out.append(t("hierarchy/delete_catalog", name=key))
        node_rows = [
            (key, i, str(label), int(lv), None if p < 0 else int(p), int(n))
            for i, (label, lv, p, n) in enumerate(
                zip(h.labels, h.levels, h.parents, h.leaf_counts, strict=True)
            )
        ]
        out.append(
            _values_insert(
                NODES, ["hierarchy", "id", "label", "level", "parent", "leaves"], node_rows
            )
        )
        closure = h.closure_frame()
        out.append(
            _values_insert(
                CLOSURE,
                ["hierarchy", "ancestor", "descendant", "distance"],
                [(key, int(a), int(d), int(k)) for a, d, k in closure.itertuples(index=False)],
            )
        )
        out.append(
            t(
                "hierarchy/insert_catalog_next",
                key=key,
                name=h.name,
                height=h.height,
                leaves=len(h.leaf_ids),
                nodes=h.size,
                source=h.source,
            )
        )
    from anonsql.output.writer import recoding_kind

    if recoding_kind(params) == "table":
        out.append(t("output/create_recodings"))
        rec = db.backend.fetch_df(
            "SELECT run_id, original, generalized, nodes FROM anonsql_recodings WHERE output = ?",
            [output],
        )
        out.append(exp.delete(table("anonsql_recodings"), exp.column("output").eq(output)))
        if len(rec):
            recoding_rows = [
                (output, int(r), list(map(str, o)), list(map(str, g)), [int(x) for x in n])
                for r, o, g, n in rec.itertuples(index=False)
            ]
            out.append(
                _values_insert(
                    "anonsql_recodings",
                    ["output", "run_id", "original", "generalized", "nodes"],
                    recoding_rows,
                )
            )
    masks = {c: m for c, m in (params.get("masks") or {}).items()}
    if any(parse_mask(c, m).keyed for c, m in masks.items()):
        # keyed masks' tokens, keyed by the SHA-256 digest of each value: no raw identifier
        # in the script; the deployed view hashes each row's value in the target engine
        out.append(t("output/create_masks"))
        rows = db.backend.fetchall(
            "SELECT run_id, col, value, token FROM anonsql_masks WHERE output = ?", [output]
        )
        out.append(exp.delete(table("anonsql_masks"), exp.column("output").eq(output)))
        if rows:
            out.append(
                _values_insert(
                    "anonsql_masks",
                    ["output", "run_id", "col", "value", "digest", "token"],
                    [(output, int(r), c, None, digest(str(v)), tok) for r, c, v, tok in rows],
                )
            )
    query, _ = run_query(db, run, dialect=dialect, mask_digests=True)
    kind = row["materialize"] or "view"
    if dialect in _DROP_AND_CREATE:
        out.append(drop(kind, output))
        out.append(create_statement(kind, output, query, replace=False))
    else:
        out.append(create_statement(kind, output, query))
    return out


def _portable(statements: list[exp.Expr], dialect: str) -> list[exp.Expr]:
    """Spark's built-in tables have no DELETE: each becomes a rewrite of the table."""
    if dialect not in _NO_DELETE:
        return statements
    from anonsql.backend.spark_backend import delete_as_rewrite

    out: list[exp.Expr] = []
    for n, s in enumerate(statements):
        if isinstance(s, exp.Delete):
            out += delete_as_rewrite(s, f"__anonsql_rewrite_{n}")
        else:
            out.append(s)
    return out


def deployment_script(db: Database, run_id: int | None, dialect: str) -> str:
    """The statements as one SQL script for ``dialect``, in a transaction where the engine
    has transactional DDL."""
    check_dialect_name(dialect)
    row = _run_row(db, run_id)
    statements = _portable(_statements(db, row, dialect), dialect)
    texts = [generate(s, dialect) for s in statements]
    if dialect in _TRANSACTIONAL_DDL:
        texts = ["BEGIN", *texts, "COMMIT"]
    header = f"-- anonsql: output of run {row['run_id']} for {dialect}\n"
    return header + "".join(f"{s};\n" for s in texts)


__all__ = ["deployment_script", "deployment_statements"]
