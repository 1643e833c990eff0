-- The catalog row of a deployed version: its version number follows the target's own
-- versions of the name (a deployment script cannot know them).
INSERT INTO anonsql_hierarchy (key, name, version, height, leaves, nodes, source, created_at)
SELECT :key, :name, COALESCE(MAX(v.version), 0) + 1, :height, :leaves, :nodes, :source,
  CURRENT_TIMESTAMP
FROM anonsql_hierarchy AS v
WHERE v.name = :name
