"""Provenance of runs (``anonsql_runs``), the suppressed classes an output view reads
(``anonsql_suppressed``), and the solution space of each run (``anonsql_solutions``)."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from anonsql.backend.base import Backend
from anonsql.backend.sql_templates import template


class Provenance:
    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        if not getattr(backend, "_provenance_ready", False):
            for name in (
                "create_runs",
                "create_suppressed",
                "create_solutions",
                "create_recodings",
            ):
                backend.execute(self._t(f"output/{name}"))
            backend._provenance_ready = True  # type: ignore[attr-defined]

    def _t(self, name: str, /, **params: Any):
        return template(name, self.backend.dialect, **params)

    def next_run_id(self) -> int:
        return int(self.backend.fetchall(self._t("output/next_run_id"))[0][0])

    def produced(self, output: str) -> bool:
        rows = self.backend.fetchall("SELECT 1 FROM anonsql_runs WHERE output = ?", [output])
        return bool(rows)

    def _insert_frame(self, name: str, frame: pd.DataFrame, **params: Any) -> None:
        self.backend.insert_frame(lambda staged: self._t(name, frame=staged, **params), frame)

    def record_run(self, run_id: int, **fields: Any) -> None:
        as_json = {
            k: json.dumps(v) if isinstance(v, (dict, list)) else v for k, v in fields.items()
        }
        self.backend.execute(self._t("output/insert_run", run_id=run_id, **as_json))

    def replace_suppressed(self, run_id: int, output: str | None, keys: list[list[str]]) -> None:
        if output:
            self.backend.execute(self._t("output/delete_suppressed_of_output", output=output))
        if keys:
            self._insert_frame(
                "output/insert_suppressed", pd.DataFrame({"class": keys}), run_id=run_id
            )
            self.backend.refresh_statistics("anonsql_suppressed")

    def replace_recodings(
        self,
        run_id: int,
        output: str,
        original: list[list[str]],
        generalized: list[list[str]],
        nodes: list[list[int]],
    ) -> None:
        """The class values of a multidimensional recoding (GAA): each distinct original QI
        tuple and its generalized labels, read by the output view."""
        self.backend.execute(self._t("output/delete_recodings_of_output", output=output))
        frame = pd.DataFrame({"original": original, "generalized": generalized, "nodes": nodes})
        self._insert_frame("output/insert_recodings", frame, run_id=run_id)
        self.backend.refresh_statistics("anonsql_recodings")

    def record_solutions(self, run_id: int, frame: pd.DataFrame) -> None:
        if len(frame):
            self._insert_frame("output/insert_solutions", frame, run_id=run_id)

    def runs(self) -> pd.DataFrame:
        return self.backend.fetch_df("SELECT * FROM anonsql_runs ORDER BY run_id")
