-- Parquet, as anonsql's other side tables on Spark.
CREATE TABLE IF NOT EXISTS anonsql_masks (
  output STRING NOT NULL,
  run_id INT NOT NULL,
  col STRING NOT NULL,
  value STRING,
  digest STRING,
  token STRING NOT NULL
) USING parquet
