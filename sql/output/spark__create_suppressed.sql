-- Parquet: Spark's default Hive text format cannot hold arrays.
CREATE TABLE IF NOT EXISTS anonsql_suppressed (
  run_id INT NOT NULL,
  class ARRAY<STRING> NOT NULL
) USING parquet
