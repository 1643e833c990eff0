"""The README's two set-up commands stay true: CI runs the test command exactly."""

from __future__ import annotations

import re

from tests.helpers.data import ROOT


def _commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = re.search(r"## Set up\n.*?```sh\n(.*?)```", text, re.S)
    assert block, "README lost its '## Set up' block"
    return [ln for ln in block.group(1).splitlines() if ln and not ln.startswith("#")]


def test_readme_has_exactly_two_setup_commands():
    assert len(_commands()) == 2


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert _commands()[1] in ci
