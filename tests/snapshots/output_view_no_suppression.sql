CREATE OR REPLACE VIEW "people_k5" AS
SELECT
  s."id" AS "id",
  CASE WHEN m0.node IS NULL OR m2.node IS NULL THEN '*' ELSE m0.generalized END AS "age",
  CASE WHEN m0.node IS NULL OR m2.node IS NULL THEN '*' ELSE CAST(s."sex" AS TEXT) END AS "sex",
  CASE WHEN m0.node IS NULL OR m2.node IS NULL THEN '*' ELSE m2.generalized END AS "zip""; --"
FROM "people" AS s
LEFT JOIN (
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
LEFT JOIN (
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
