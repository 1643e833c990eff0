"""The documentation site (mkdocs.yml, docs/): it builds with `mkdocs build --strict`, every
page is in the navigation, and every ```sh and ```python block of every page runs, page
after page in the navigation's order, in one fresh folder after `anonsql demo` (the rules of
:mod:`tests.helpers.examples`, as for the README: a block marked
``<!-- example: not run (REASON) -->`` is skipped with its reason, a block reading
../shared skips when the shared data are absent)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import time

import pytest

from tests.helpers.data import ROOT
from tests.helpers.examples import blocks_of, malformed_markers, run_blocks

DOCS = ROOT / "docs"


def nav_pages() -> list[str]:
    """The pages of mkdocs.yml's navigation, in its order (paths relative to docs/)."""
    text = (ROOT / "mkdocs.yml").read_text()
    nav = text.split("\nnav:\n", 1)[1]
    return re.findall(r":\s*([\w/.-]+\.md)\s*$", nav, re.M)


def test_every_page_is_in_the_navigation_once():
    pages = nav_pages()
    on_disk = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    assert len(pages) == len(set(pages))
    assert sorted(pages) == on_disk


def test_docs_blocks_are_well_formed():
    for page in nav_pages():
        assert malformed_markers((DOCS / page).read_text()) == [], page


def test_mkdocs_build_strict(tmp_path):
    for module in ("mkdocs", "material"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (pip install -e '.[docs]')")
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "index.html").is_file()
    print(f"mkdocs build --strict: {time.perf_counter() - start:.1f} s")


def test_docs_examples_run_in_order(tmp_path, monkeypatch):
    blocks = []
    for page in nav_pages():
        blocks += blocks_of((DOCS / page).read_text(), source=f"docs/{page}")
    outcome = run_blocks(blocks, tmp_path, monkeypatch)
    assert outcome.ran >= 40, f"only {outcome.ran} blocks ran; skipped: {outcome.skipped}"
    outcome.print_slowest()
