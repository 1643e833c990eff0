-- Privacy-budget limits per source table (anonsql budget set): the latest row of a source
-- is its limit; the budget spent is read from the DP releases in anonsql_runs.
CREATE TABLE IF NOT EXISTS anonsql_dp_budget (
  source VARCHAR NOT NULL,
  epsilon DOUBLE NOT NULL,
  delta DOUBLE NOT NULL,
  set_at TIMESTAMP NOT NULL
)
