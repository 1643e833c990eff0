"""Where the files anonsql ships live: ``sql/`` and ``hierarchies/``.

In a wheel they sit inside the package (``anonsql/sql``); in a source checkout or an editable
install, at the top of the repository.
"""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent


def resource_dir(name: str) -> Path:
    for candidate in (_PKG / name, _PKG.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"anonsql's {name}/ folder is missing from the installation")
