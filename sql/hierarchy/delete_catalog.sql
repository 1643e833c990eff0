DELETE FROM anonsql_hierarchy WHERE name = :name
