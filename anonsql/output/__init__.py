"""Writing results into the database: the anonymized view or table, and provenance."""
