-- Each leaf's ancestor on every level (the leaf itself on level 0), with its label: what a
-- published view's read maps the source's values through, one lookup per QI. Derived in SQL
-- from the node and closure tables when a version is stored (insert_map.sql).
CREATE TABLE IF NOT EXISTS anonsql_hierarchy_map (
  hierarchy VARCHAR NOT NULL,
  level INTEGER NOT NULL,
  value VARCHAR NOT NULL,
  generalized VARCHAR NOT NULL,
  node INTEGER NOT NULL,
  PRIMARY KEY (hierarchy, level, value)
)
