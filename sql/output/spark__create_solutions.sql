-- Parquet: Spark's default Hive text format cannot hold arrays.
CREATE TABLE IF NOT EXISTS anonsql_solutions (
  run_id INT NOT NULL,
  levels ARRAY<INT> NOT NULL,
  transformation STRING NOT NULL,
  score DOUBLE,
  suppressed_rows BIGINT,
  classes BIGINT,
  minimal BOOLEAN,
  optimal BOOLEAN
) USING parquet
