CREATE TABLE IF NOT EXISTS anonsql_solutions (
  run_id INTEGER NOT NULL,
  levels INTEGER[] NOT NULL,
  transformation VARCHAR NOT NULL,
  score DOUBLE,
  suppressed_rows BIGINT,
  classes BIGINT,
  minimal BOOLEAN,
  optimal BOOLEAN
)
