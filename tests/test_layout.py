"""The tests' own layout (issue 29): no test module imports another test module (or a
conftest), so a file can be moved, split or run alone; what several files share lives in
``tests/helpers/``. Every ``import`` is read with ``ast``, at any depth."""

from __future__ import annotations

import ast
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _is_test_module(path: Path) -> bool:
    return path.name.startswith("test_") or path.name == "conftest.py"


def _module_path(name: str) -> Path | None:
    """The file of a module ``tests.a.b`` (``a/b.py`` or ``a/b/__init__.py``), if it exists."""
    parts = name.split(".")
    if parts[0] != "tests":
        return None
    base = TESTS.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _package_of(path: Path) -> list[str]:
    rel = path.relative_to(TESTS.parent).with_suffix("")
    return list(rel.parts[:-1])


def imported_test_modules(path: Path, text: str | None = None) -> list[tuple[int, str]]:
    """(line, module) for each test module ``path`` (or ``text``, as if it were there)
    imports."""
    found = []
    source = path.read_text() if text is None else text
    for node in ast.walk(ast.parse(source, str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = _package_of(path)
                package = package[: len(package) - node.level + 1]
                base = ".".join([*package, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            # ``from tests.x import y``: y is a module or a name of tests.x
            names = [base, *(f"{base}.{a.name}" for a in node.names)]
        for name in names:
            target = _module_path(name)
            if target is not None and _is_test_module(target) and target != path:
                found.append((node.lineno, str(target.relative_to(TESTS.parent))))
    return found


def test_no_test_module_imports_another():
    offences = [
        f"{path.relative_to(TESTS.parent)}:{line} imports {target}"
        for path in sorted(TESTS.rglob("*.py"))
        for line, target in imported_test_modules(path)
    ]
    assert not offences, (
        "a test module imports another test module; move what they share to tests/helpers/:\n"
        + "\n".join(offences)
    )


def test_the_check_sees_imports_of_test_modules():
    """The check itself: each form of import of a test module is found, helpers are not."""
    source = (
        "import tests.test_layout\n"
        "from tests import test_layout\n"
        "from tests.test_layout import TESTS\n"
        "from ..test_layout import TESTS\n"
        "def f():\n    from tests.conftest import db\n"
        "from tests.helpers import data\n"
        "from tests.helpers.data import ROOT\n"
        "from . import data\n"
    )
    found = imported_test_modules(TESTS / "helpers" / "__init__.py", source)
    assert [line for line, _ in found] == [1, 2, 3, 4, 6]


def test_every_paper_fixture_is_described():
    """Each data file of ``tests/fixtures/papers/`` is named in its README (which paper, table
    or figure it is from), and each file the README names exists."""
    folder = TESTS / "fixtures" / "papers"
    readme = (folder / "README.md").read_text()
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name != "README.md")
    assert files
    missing = [
        str(p.relative_to(folder))
        for p in files
        if f"`{p.relative_to(folder)}`" not in readme and f"`{p.name}`" not in readme
    ]
    assert not missing, f"not described in tests/fixtures/papers/README.md: {missing}"
    named = set(re.findall(r"`([\w./-]+\.(?:csv|json))`", readme))
    assert all(list(folder.rglob(name.rsplit("/", 1)[-1])) for name in named), named
