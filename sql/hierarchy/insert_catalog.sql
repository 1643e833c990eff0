INSERT INTO anonsql_hierarchy (name, height, leaves, nodes, source, created_at)
VALUES (:name, :height, :leaves, :nodes, :source, CURRENT_TIMESTAMP)
