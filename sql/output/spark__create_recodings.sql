-- Parquet: Spark's default Hive text format cannot hold arrays.
CREATE TABLE IF NOT EXISTS anonsql_recodings (
  output STRING NOT NULL,
  run_id INT NOT NULL,
  original ARRAY<STRING> NOT NULL,
  generalized ARRAY<STRING> NOT NULL,
  nodes ARRAY<INT> NOT NULL
) USING parquet
