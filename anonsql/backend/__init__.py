"""Backends run SQL. Everything else in anonsql only *builds* SQL (sqlglot expressions)."""
