"""Every ```sh and ```python block of README.md runs, in order, as a user would run it: in
a fresh folder, after `anonsql demo`, with ../shared beside that folder. The rules (markers
for blocks that are not run, files written from ```toml blocks, blocks that need the shared
data) are those of :mod:`tests.helpers.examples`, which the documentation site's pages share
(tests/docs/test_docs.py). The README is read when the test runs, so sections added later are
covered too.
"""

from __future__ import annotations

from tests.helpers.data import ROOT
from tests.helpers.examples import blocks_of, malformed_markers, run_blocks


def test_readme_blocks_are_well_formed():
    text = (ROOT / "README.md").read_text()
    assert sum(b.lang in ("sh", "python") for b in blocks_of(text)) >= 6
    assert malformed_markers(text) == []


def test_readme_examples_run_in_order(tmp_path, monkeypatch):
    blocks = blocks_of((ROOT / "README.md").read_text())
    outcome = run_blocks(blocks, tmp_path, monkeypatch)
    assert outcome.ran >= 5, f"only {outcome.ran} README blocks ran; skipped: {outcome.skipped}"
    outcome.print_slowest()
