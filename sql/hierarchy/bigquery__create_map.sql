-- No PRIMARY KEY: bigquery's tables do not take (or enforce) constraints.
CREATE TABLE IF NOT EXISTS anonsql_hierarchy_map (
  hierarchy STRING NOT NULL,
  level INT64 NOT NULL,
  value STRING NOT NULL,
  generalized STRING NOT NULL,
  node INT64 NOT NULL
)
