SELECT c.name, c.version, c.key, c.height, c.leaves, c.nodes, c.source, c.created_at
FROM anonsql_hierarchy AS c
ORDER BY c.name, c.version
