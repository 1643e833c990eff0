DELETE FROM anonsql_hierarchy_node WHERE hierarchy = :name
