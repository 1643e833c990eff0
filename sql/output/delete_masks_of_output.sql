DELETE FROM anonsql_masks WHERE output = :output
