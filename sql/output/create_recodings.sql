-- The recodings of multidimensional outputs (GAA and the other non-lattice algorithms), keyed
-- by the output that reads them: re-running (or deploying) one output replaces only its rows.
CREATE TABLE IF NOT EXISTS anonsql_recodings (
  output VARCHAR NOT NULL,
  run_id INTEGER NOT NULL,
  original VARCHAR[] NOT NULL,
  generalized VARCHAR[] NOT NULL,
  nodes INTEGER[] NOT NULL
)
