"""Errors raised by anonsql.

Every error a user can cause is an :class:`AnonsqlError`, so the CLI can print it as a clean
message and exit non-zero instead of showing a traceback.
"""


class AnonsqlError(ValueError):
    """Base class of the errors a user can cause (bad input, bad parameters)."""


class HierarchyError(AnonsqlError):
    """A hierarchy definition is malformed (two parents, unequal depth, cycle, ...)."""


class MissingValuesError(AnonsqlError):
    """Data values that a hierarchy does not contain."""

    def __init__(self, message: str, count: int, examples: list[str]):
        super().__init__(message)
        self.count = count
        self.examples = examples


class InputError(AnonsqlError):
    """Unknown table or column, bad parameter, or any other invalid request."""


class BackendError(AnonsqlError):
    """The database engine refused a statement, or cannot be reached."""


class UnsupportedDialectError(AnonsqlError):
    """A SQL dialect cannot express a construct a run needs."""
