CREATE TABLE IF NOT EXISTS anonsql_dp_budget (
  source STRING NOT NULL,
  epsilon DOUBLE NOT NULL,
  delta DOUBLE NOT NULL,
  set_at TIMESTAMP NOT NULL
) USING parquet
