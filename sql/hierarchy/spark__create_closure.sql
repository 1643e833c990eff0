-- No PRIMARY KEY: spark's tables do not take (or enforce) constraints.
CREATE TABLE IF NOT EXISTS anonsql_hierarchy_closure (
  hierarchy STRING NOT NULL,
  ancestor INT NOT NULL,
  descendant INT NOT NULL,
  distance INT NOT NULL
) USING parquet
