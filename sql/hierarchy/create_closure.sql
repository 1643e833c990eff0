CREATE TABLE IF NOT EXISTS anonsql_hierarchy_closure (
  hierarchy VARCHAR NOT NULL,
  ancestor INTEGER NOT NULL,
  descendant INTEGER NOT NULL,
  distance INTEGER NOT NULL,
  PRIMARY KEY (hierarchy, ancestor, descendant)
)
