-- No PRIMARY KEY: spark's tables do not take (or enforce) constraints; anonsql keeps keys
-- unique itself (a version's key is its name and content hash).
CREATE TABLE IF NOT EXISTS anonsql_hierarchy (
  key STRING NOT NULL,
  name STRING NOT NULL,
  version INT NOT NULL,
  height INT NOT NULL,
  leaves INT NOT NULL,
  nodes INT NOT NULL,
  source STRING,
  created_at TIMESTAMP NOT NULL
) USING parquet
