-- No PRIMARY KEY / UNIQUE: bigquery's tables do not take (or enforce) constraints; the
-- hierarchy is validated in Python before it is stored.
CREATE TABLE IF NOT EXISTS anonsql_hierarchy_node (
  hierarchy STRING NOT NULL,
  id INT64 NOT NULL,
  label STRING NOT NULL,
  level INT64 NOT NULL,
  parent INT64,
  leaves INT64 NOT NULL
) 
