-- One row per stored hierarchy *version*. ``key`` names the version in the node and closure
-- tables (``<name>@<content hash>``); outputs pin the key, so loading a name again adds a
-- version instead of changing what a published view reads. A name resolves to its highest
-- version for new runs.
CREATE TABLE IF NOT EXISTS anonsql_hierarchy (
  key VARCHAR PRIMARY KEY,
  name VARCHAR NOT NULL,
  version INTEGER NOT NULL,
  height INTEGER NOT NULL,
  leaves INTEGER NOT NULL,
  nodes INTEGER NOT NULL,
  source VARCHAR,
  created_at TIMESTAMP NOT NULL
)
