DELETE FROM anonsql_hierarchy WHERE key = :name
