-- No PRIMARY KEY: bigquery's tables do not take (or enforce) constraints; run ids come from
-- MAX(run_id) + 1 inside the run's transaction.
CREATE TABLE IF NOT EXISTS anonsql_runs (
  run_id INT64 NOT NULL,
  created_at TIMESTAMP NOT NULL,
  source STRING NOT NULL,
  output STRING,
  materialize STRING,
  algorithm STRING NOT NULL,
  parameters STRING NOT NULL,
  levels STRING,
  measures STRING,
  timings STRING,
  nodes_checked INT64,
  lattice_size INT64
) 
