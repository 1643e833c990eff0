-- No PRIMARY KEY: spark's tables do not take (or enforce) constraints.
CREATE TABLE IF NOT EXISTS anonsql_hierarchy_map (
  hierarchy STRING NOT NULL,
  level INT NOT NULL,
  value STRING NOT NULL,
  generalized STRING NOT NULL,
  node INT NOT NULL
) USING parquet
