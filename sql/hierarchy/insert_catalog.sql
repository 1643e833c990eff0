INSERT INTO anonsql_hierarchy (key, name, version, height, leaves, nodes, source, created_at)
VALUES (:key, :name, :version, :height, :leaves, :nodes, :source, CURRENT_TIMESTAMP)
