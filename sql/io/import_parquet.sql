CREATE TABLE :target AS SELECT * FROM read_parquet(:path)
