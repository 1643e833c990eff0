CREATE TABLE IF NOT EXISTS anonsql_recodings (
  run_id INTEGER NOT NULL,
  original VARCHAR[] NOT NULL,
  generalized VARCHAR[] NOT NULL,
  nodes INTEGER[] NOT NULL
)
