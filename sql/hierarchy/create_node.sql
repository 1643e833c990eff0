CREATE TABLE IF NOT EXISTS anonsql_hierarchy_node (
  hierarchy VARCHAR NOT NULL,
  id INTEGER NOT NULL,
  label VARCHAR NOT NULL,
  level INTEGER NOT NULL,
  parent INTEGER,
  leaves INTEGER NOT NULL,
  PRIMARY KEY (hierarchy, id),
  UNIQUE (hierarchy, level, label)
)
