INSERT INTO anonsql_hierarchy_node (hierarchy, id, label, level, parent, leaves)
SELECT CAST(:name AS VARCHAR), f.id, f.label, f.level, f.parent, f.leaves FROM :frame AS f
