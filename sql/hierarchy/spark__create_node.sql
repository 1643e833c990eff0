-- No PRIMARY KEY / UNIQUE: spark's tables do not take (or enforce) constraints; the
-- hierarchy is validated in Python before it is stored.
CREATE TABLE IF NOT EXISTS anonsql_hierarchy_node (
  hierarchy STRING NOT NULL,
  id INT NOT NULL,
  label STRING NOT NULL,
  level INT NOT NULL,
  parent INT,
  leaves INT NOT NULL
) USING parquet
