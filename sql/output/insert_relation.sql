INSERT INTO anonsql_relations VALUES (:name, :writer, CURRENT_TIMESTAMP)
