"""Every table of a database and its contents: what a refused run must leave as it was."""

from __future__ import annotations

from anonsql.database import Database


def snapshot(db: Database) -> dict:
    tables = db.backend.fetchall(
        "SELECT table_name, table_type FROM information_schema.tables ORDER BY 1"
    )
    out = {}
    for name, kind in tables:
        q = db.backend.quote(name)
        out[name] = (kind, db.backend.fetch_df(f"SELECT * FROM {q}").to_csv(index=False))
    return out


__all__ = ["snapshot"]
