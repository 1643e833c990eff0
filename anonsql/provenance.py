"""Provenance of runs (``anonsql_runs``), the recodings multidimensional outputs read
(``anonsql_recodings``, keyed by output), the tokens of keyed masks (``anonsql_masks``, keyed
by output), and the solution space of each run
(``anonsql_solutions``). An output's current run is the latest run that wrote it."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
from sqlglot import exp

from anonsql.backend.base import Backend, static
from anonsql.backend.sql_templates import template


class Provenance:
    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        if "provenance" not in backend.schemas_ready:
            for name in (
                "create_runs",
                "create_solutions",
                "create_recodings",
                "create_masks",
            ):
                backend.execute(static(f"output/{name}", backend.dialect))
            backend.restrict_access(
                "anonsql_runs", "anonsql_solutions", "anonsql_recodings", "anonsql_masks"
            )
            backend.schemas_ready.add("provenance")

    def _t(self, name: str, /, **params: Any):
        return template(name, self.backend.dialect, **params)

    def next_run_id(self) -> int:
        return int(self.backend.fetchall(static("output/next_run_id", self.backend.dialect))[0][0])

    def produced(self, output: str) -> bool:
        """Whether a run wrote relation ``output``, under any name the engine takes for it
        (a run that wrote "ADULT_K5" wrote ``adult_k5`` on DuckDB): compared in Python by
        the backend's rule, which SQL string equality cannot express for every engine."""
        rows = self.backend.fetchall(
            "SELECT DISTINCT output FROM anonsql_runs WHERE output IS NOT NULL"
        )
        return any(self.backend.same_relation(str(r[0]), output) for r in rows)

    def _insert_frame(self, name: str, frame: Any, **params: Any) -> None:
        self.backend.insert_frame(lambda staged: self._t(name, frame=staged, **params), frame)

    def record_run(self, run_id: int, **fields: Any) -> None:
        as_json = {
            k: json.dumps(v) if isinstance(v, (dict, list)) else v for k, v in fields.items()
        }
        # a new run's row (by its id): an engine that emulates transactions by copying
        # tables (Spark) deletes it to undo, instead of copying the whole history first
        self.backend.appends("anonsql_runs", exp.column("run_id").eq(run_id))
        self.backend.execute(self._t("output/insert_run", run_id=run_id, **as_json))

    def replace_recodings(self, run_id: int, output: str, frame: Any) -> None:
        """The class values of a multidimensional recoding (Mondrian, GAA, MDAV...): each
        distinct original QI tuple, its generalized labels and node ids, read by the output
        view. ``frame``: the rows as :meth:`TableRecoding.frame
        <anonsql.algorithms.recoding.TableRecoding.frame>` gives them for this engine."""
        self.backend.execute(self._t("output/delete_recodings_of_output", output=output))
        self._insert_frame("output/insert_recodings", frame, run_id=run_id, output=output)
        self.backend.refresh_statistics("anonsql_recodings")

    def replace_masks(self, run_id: int, output: str, frame: pd.DataFrame | None) -> None:
        """The tokens of ``output``'s keyed masks (``col``, ``digest``, ``token``), replacing
        the ones an earlier run wrote for that output."""
        self.backend.execute(self._t("output/delete_masks_of_output", output=output))
        if frame is not None and len(frame):
            self._insert_frame("output/insert_masks", frame, run_id=run_id, output=output)
            self.backend.refresh_statistics("anonsql_masks")

    def record_solutions(self, run_id: int, frame: pd.DataFrame) -> None:
        if len(frame):
            self.backend.appends("anonsql_solutions", exp.column("run_id").eq(run_id))
            self._insert_frame("output/insert_solutions", frame, run_id=run_id)

    def latest_runs(self) -> dict[str, dict[str, Any]]:
        """Output name -> its current run (the latest that wrote it), for outputs that still
        exist: run_id, source, materialize, algorithm, parameters, levels, measures."""
        rows = self.backend.fetchall(
            "SELECT run_id, output, source, materialize, algorithm, parameters, levels, measures "
            "FROM anonsql_runs WHERE output IS NOT NULL ORDER BY run_id"
        )
        latest: dict[str, dict[str, Any]] = {}
        for run_id, output, source, materialize, algorithm, params, levels, measures in rows:
            # keyed as the engine resolves names: OUT and out are one relation on DuckDB
            latest[self.backend.canonical_name(output)] = {
                "run_id": int(run_id),
                "output": output,
                "source": source,
                "materialize": materialize,
                "algorithm": algorithm,
                "parameters": json.loads(params),
                "levels": json.loads(levels) if levels else None,
                "measures": json.loads(measures) if measures else {},
            }
        return {r["output"]: r for r in latest.values() if self.backend.table_exists(r["output"])}

    def hierarchy_users(self) -> dict[str, list[str]]:
        """Pinned hierarchy key -> the existing outputs whose current run reads it."""
        users: dict[str, list[str]] = {}
        for output, run in self.latest_runs().items():
            for key in run["parameters"].get("hierarchy_keys", []):
                users.setdefault(key, []).append(output)
        return users

    def runs(self) -> pd.DataFrame:
        return self.backend.fetch_df("SELECT * FROM anonsql_runs ORDER BY run_id")
