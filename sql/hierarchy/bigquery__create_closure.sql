-- No PRIMARY KEY: bigquery's tables do not take (or enforce) constraints.
CREATE TABLE IF NOT EXISTS anonsql_hierarchy_closure (
  hierarchy STRING NOT NULL,
  ancestor INT64 NOT NULL,
  descendant INT64 NOT NULL,
  distance INT64 NOT NULL
) 
