DELETE FROM anonsql_relations WHERE name = :name
