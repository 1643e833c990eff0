-- The version a reference names: a version key, else a name's latest (current) version.
SELECT c.key, c.name, c.source
FROM anonsql_hierarchy AS c
WHERE c.key = :ref OR (
  c.name = :ref AND c.version = (SELECT MAX(v.version) FROM anonsql_hierarchy AS v WHERE v.name = :ref)
)
ORDER BY CASE WHEN c.key = :ref THEN 0 ELSE 1 END
LIMIT 1
