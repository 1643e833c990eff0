SELECT n.id, n.label, n.level, n.parent, n.leaves
FROM anonsql_hierarchy_node AS n
WHERE n.hierarchy = :name
ORDER BY n.id
