DELETE FROM anonsql_hierarchy_map WHERE hierarchy = :name
