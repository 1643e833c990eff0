-- No PRIMARY KEY: bigquery's tables do not take (or enforce) constraints; anonsql keeps keys
-- unique itself (a version's key is its name and content hash).
CREATE TABLE IF NOT EXISTS anonsql_hierarchy (
  key STRING NOT NULL,
  name STRING NOT NULL,
  version INT64 NOT NULL,
  height INT64 NOT NULL,
  leaves INT64 NOT NULL,
  nodes INT64 NOT NULL,
  source STRING,
  created_at TIMESTAMP NOT NULL
)
