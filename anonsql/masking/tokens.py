"""Keyed masks at run time: the tokens of every distinct value of each column under a keyed
method (pseudonym, token, fake), computed in this process with the key and stored by value in
``anonsql_masks`` (:mod:`anonsql.masking.methods`), a side table protected as
``anonsql_recodings`` is.

The key is loaded before the run's search, so a run that needs one and has none stops at
once, having written nothing. Its bytes stay in this process: neither they nor anything
derived from them but the tokens reach the database.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from sqlglot import exp

from anonsql.backend.sql_templates import column, table
from anonsql.errors import InputError
from anonsql.masking.keys import load_key
from anonsql.masking.methods import FAKE_FOR_KIND, Mask, Tokenizer
from anonsql.masking.roles import Roles
from anonsql.spec import Spec


@dataclass
class Tokens:
    """The rows ``anonsql_masks`` gets for one output: ``col``, ``value``, ``token``."""

    frame: pd.DataFrame
    masks: dict[str, Mask]  # the keyed masks, fake kinds resolved


def keyed_masks(roles: Roles) -> dict[str, Mask]:
    return {c: m for c, m in roles.masks.items() if m.keyed}


def prepare_tokens(db, source: str, spec: Spec, roles: Roles) -> Tokens | None:
    """Tokens of the output's keyed masks (None when it has none)."""
    keyed = keyed_masks(roles)
    if not keyed:
        return None
    names = ", ".join(f"{c}={m.text()}" for c, m in keyed.items())
    key = load_key(getattr(spec, "key_file", None), needed_for=f"--mask {names}")
    tok = Tokenizer(key, getattr(spec, "fake_locale", "en_US") or "en_US")
    resolved: dict[str, Mask] = {}
    for c, m in keyed.items():
        if m.method == "fake" and m.kind is None:
            from anonsql.masking.profile import profile_table

            p = profile_table(db, source, [c])[0]
            kind = FAKE_FOR_KIND.get(p.kind)
            if kind is None:
                raise InputError(
                    f"mask of {c!r}: cannot tell what fake values to make for a column of "
                    f"{p.kind} values; give the kind, e.g. fake:name or fake:email"
                )
            m = Mask("fake", kind=kind)
        resolved[c] = m
    frames = []
    for c, m in resolved.items():
        values = distinct_values(db, source, c)
        frames.append(
            pd.DataFrame(
                {"col": c, "value": values, "token": tok.tokens(m, values)},
                columns=["col", "value", "token"],
            )
        )
    del key, tok  # nothing keyed outlives the computation
    return Tokens(pd.concat(frames, ignore_index=True), resolved)


def distinct_values(db, source: str, col: str) -> list[str]:
    """The column's distinct non-NULL values as the engine writes them as text (the text
    its view hashes at read time)."""
    text = exp.cast(column(col), "VARCHAR")
    q = (
        exp.select(exp.alias_(text, "v"))
        .distinct()
        .from_(table(source))
        .where(exp.Not(this=column(col).is_(exp.null())))
    )
    return [str(r[0]) for r in db.backend.fetchall(q)]


__all__ = ["Tokens", "distinct_values", "keyed_masks", "prepare_tokens"]
