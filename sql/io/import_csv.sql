CREATE TABLE :target AS SELECT * FROM read_csv(:path, delim = :sep, header = TRUE)
