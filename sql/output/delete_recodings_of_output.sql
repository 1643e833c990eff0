DELETE FROM anonsql_recodings WHERE output = :output
