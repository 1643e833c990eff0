"""Anonymization statements of both forms (``ANONYMIZE TABLE ...`` and SAP HANA's
``CREATE VIEW ... WITH ANONYMIZATION``), hostile names included: the SQL surface's tests parse
and generate them back, the snapshot tests keep their generated SQL."""

from __future__ import annotations

STATEMENTS = [
    "ANONYMIZE TABLE census INTO census_k5 WITH (k = 5)",
    "ANONYMIZE TABLE census INTO census_k5 WITH (k = 5, l = 2, qi = (age, sex, zip), "
    "sensitive = income, suppression = 0.05, algorithm = 'flash')",
    "ANONYMIZE TABLE census INTO c WITH (k = 3, qi = (age), hierarchy = (age = 'age'), "
    "metric = 'nllm', materialize = 'table', drop_suppressed = TRUE, solutions = FALSE, "
    "t = 0.4, t_variant = 'ordered-emd', c = -1.5)",
    'ANONYMIZE TABLE "x""; DROP TABLE t; --" INTO "select" WITH (qi = ("a b", "from"), k = 2)',
    "CREATE VIEW v AS SELECT * FROM census WITH ANONYMIZATION (ALGORITHM 'K-ANONYMITY')",
    "CREATE OR REPLACE VIEW adult_k5 AS SELECT * FROM adult WITH ANONYMIZATION (ALGORITHM "
    "'K-ANONYMITY' PARAMETERS '{\"k\": 5, \"suppression_limit\": 0.05}' COLUMN age PARAMETERS "
    '\'{"is_quasi_identifier": true, "hierarchy": "adult_age"}\' COLUMN salary PARAMETERS '
    "'{\"is_sensitive\": true}')",
    "CREATE TABLE t2 AS SELECT a, b FROM t WITH ANONYMIZATION (ALGORITHM 'L-DIVERSITY' "
    'PARAMETERS \'{"k": 2, "l": 2}\' COLUMN a PARAMETERS \'{"is_quasi_identifier": true}\' '
    "COLUMN b PARAMETERS '{\"is_sensitive\": true}')",
]


__all__ = ["STATEMENTS"]
