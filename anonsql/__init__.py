"""anonsql: anonymization that lives inside the database.

Heavy modules (duckdb, pandas, numpy) are imported lazily so that ``anonsql --help``
stays instant; import the submodules you need directly.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
