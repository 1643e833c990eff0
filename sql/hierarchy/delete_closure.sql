DELETE FROM anonsql_hierarchy_closure WHERE hierarchy = :name
