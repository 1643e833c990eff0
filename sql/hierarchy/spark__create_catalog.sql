-- No PRIMARY KEY: spark's tables do not take (or enforce) constraints; anonsql keeps names
-- unique itself (a hierarchy is replaced by delete + insert in one transaction).
CREATE TABLE IF NOT EXISTS anonsql_hierarchy (
  name STRING NOT NULL,
  height INT NOT NULL,
  leaves INT NOT NULL,
  nodes INT NOT NULL,
  source STRING,
  created_at TIMESTAMP NOT NULL
) USING parquet
