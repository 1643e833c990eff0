CREATE TABLE IF NOT EXISTS anonsql_runs (
  run_id INTEGER PRIMARY KEY,
  created_at TIMESTAMP NOT NULL,
  source VARCHAR NOT NULL,
  output VARCHAR,
  materialize VARCHAR,
  algorithm VARCHAR NOT NULL,
  parameters VARCHAR NOT NULL,
  levels VARCHAR,
  measures VARCHAR,
  timings VARCHAR,
  nodes_checked INTEGER,
  lattice_size BIGINT
)
