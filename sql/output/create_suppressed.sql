CREATE TABLE IF NOT EXISTS anonsql_suppressed (
  run_id INTEGER NOT NULL,
  class VARCHAR[] NOT NULL
)
