CREATE OR REPLACE VIEW "people_k5" AS
SELECT
  s."id" AS "id",
  m0.generalized AS "age",
  CAST(s."sex" AS TEXT) AS "sex",
  m2.generalized AS "zip""; --"
FROM "people" AS s
JOIN (
  /* Leaf label -> its ancestor's label on one level, read off the closure table. */
  SELECT
    leaf.label AS value,
    anc.label AS generalized,
    anc.id AS node
  FROM anonsql_hierarchy_node AS leaf
  JOIN anonsql_hierarchy_closure AS c
    ON c.hierarchy = 'age' AND c.descendant = leaf.id AND c.distance = 2
  JOIN anonsql_hierarchy_node AS anc
    ON anc.hierarchy = 'age' AND anc.id = c.ancestor
  WHERE
    leaf.hierarchy = 'age' AND leaf.level = 0
) AS m0
  ON m0.value = CAST(s."age" AS TEXT)
JOIN (
  /* Leaf label -> its ancestor's label on one level, read off the closure table. */
  SELECT
    leaf.label AS value,
    anc.label AS generalized,
    anc.id AS node
  FROM anonsql_hierarchy_node AS leaf
  JOIN anonsql_hierarchy_closure AS c
    ON c.hierarchy = 'zip"; --' AND c.descendant = leaf.id AND c.distance = 3
  JOIN anonsql_hierarchy_node AS anc
    ON anc.hierarchy = 'zip"; --' AND anc.id = c.ancestor
  WHERE
    leaf.hierarchy = 'zip"; --' AND leaf.level = 0
) AS m2
  ON m2.value = CAST(s."zip""; --" AS TEXT)
