"""Runs the ```sh and ```python blocks of Markdown documents (README.md, the pages of docs/)
as a user would run them: in order, in a fresh folder, after `anonsql demo` (the census demo
database, anonsql.duckdb), with ../shared beside that folder where the project's shared data
sets are.

- A block preceded by the line ``<!-- example: not run (REASON) -->`` is skipped (it needs a
  server, minutes, software that is not installed, ...); the reason must be given.
- ```text blocks (and blocks without a language) are output and are never run.
- A ```toml / ```yaml / ```json / ```sql block whose first line is a comment ``# NAME`` (or
  ``-- NAME``) is written to the file NAME, so a later block can use it (``anonsql run
  spec.toml``, ``anonsql sql -f short.sql``).
- A block that reads ``../shared`` (or ``adult.duckdb``, which an earlier block makes from
  it) skips, saying so, when the shared data are absent.

Shell blocks run with ``bash -e -o pipefail``; a line that is one plain ``anonsql`` command
(no pipe, redirection or ``&&``) is run in this process through the same click entry point
the console script calls (a new Python per command would cost ~1 s each); anything else runs
in bash with ``anonsql`` on PATH as ``python -m anonsql.cli.main`` of this checkout.
"""

from __future__ import annotations

import contextlib
import gc
import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.helpers.data import ROOT, SHARED

NOT_RUN = re.compile(r"<!--\s*example:\s*not run\s*\((?P<reason>[^)]*\S[^)]*)\)\s*-->")
FENCE = re.compile(r"^```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^```[ \t]*$", re.M | re.S)
MARKER = re.compile(r"^<!--\s*example:[^>]*-->[ \t]*$", re.M)
SHELL_META = re.compile(r"[|&;<>`$()*?\[\]{}~]")
FILE_LANGS = ("toml", "yaml", "yml", "json", "sql")


@dataclass
class Block:
    lang: str
    body: str
    line: int
    skip: str | None  # reason given in the document, or None
    source: str = "README.md"

    def __str__(self) -> str:
        return f"{self.source} line {self.line} ({self.lang})"


def blocks_of(text: str, source: str = "README.md") -> list[Block]:
    out = []
    for m in FENCE.finditer(text):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = NOT_RUN.search(before)
        line = text.count("\n", 0, m.start()) + 1
        reason = marker["reason"] if marker else None
        out.append(Block(m["lang"].lower(), m["body"], line, reason, source))
    return out


def malformed_markers(text: str) -> list[str]:
    """Markers with no reason, or not right before a block: typos that would run a block."""
    bad = []
    for m in MARKER.finditer(text):
        if not NOT_RUN.fullmatch(m.group(0).strip()):
            bad.append(f"malformed marker {m.group(0)!r}")
        elif not text[m.end() :].lstrip("\n").startswith("```"):
            bad.append(f"marker {m.group(0)!r} is not right before a block")
    return bad


def shell_commands(body: str) -> list[str]:
    """The block's commands, continuation lines joined; comments and blank lines dropped."""
    joined = re.sub(r"\\\n", " ", body)
    return [ln for ln in joined.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


def _plain_anonsql(command: str) -> list[str] | None:
    """The arguments of a line that is one plain `anonsql ...` command, else None."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        return None
    if not words or words[0] != "anonsql":
        return None
    # a shell construct outside quotes: hand the line to bash
    unquoted = re.sub(r"'[^']*'|\"[^\"]*\"", "", command.split(" #", 1)[0])
    if SHELL_META.search(unquoted):
        return None
    return words[1:]


def _shim(bin_dir: Path) -> None:
    """`anonsql` on PATH for bash: this checkout's CLI, whatever is installed."""
    bin_dir.mkdir()
    script = bin_dir / "anonsql"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m anonsql.cli.main "$@"\n')
    script.chmod(0o755)


class Runner:
    """Runs the blocks; ``opened`` collects every Database opened in this process, so each
    command or Python block closes what it opened (as its process would on exit) and a
    later command in bash can take the file's lock."""

    def __init__(self, work: Path, opened: list) -> None:
        self.work = work
        self.opened = opened
        bin_dir = work.parent / "bin"
        _shim(bin_dir)
        self.env = {
            **os.environ,
            "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        }
        self.env.pop("ANONSQL_DB", None)
        self.cli = CliRunner()

    def anonsql(self, args: list[str], where: str) -> None:
        from anonsql.cli.main import cli

        result = self.cli.invoke(cli, args, env={"ANONSQL_DB": None}, catch_exceptions=True)
        self.close_opened()
        if result.exit_code != 0:
            detail = result.output
            if result.exception is not None and not isinstance(result.exception, SystemExit):
                detail += f"\n{type(result.exception).__name__}: {result.exception}"
            pytest.fail(
                f"{where}: `anonsql {shlex.join(args)}` exited {result.exit_code}\n{detail}"
            )

    def close_opened(self) -> None:
        while self.opened:
            db = self.opened.pop()
            with contextlib.suppress(Exception):  # closed already
                db.close()
        gc.collect()

    def bash(self, command: str, where: str) -> None:
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", command],
            cwd=self.work,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if done.returncode != 0:
            pytest.fail(
                f"{where}: `{command}` exited {done.returncode}\n{done.stdout}\n{done.stderr}"
            )

    def shell_block(self, block: Block) -> None:
        for command in shell_commands(block.body):
            args = _plain_anonsql(command)
            if args is not None:
                self.anonsql(args, str(block))
            else:
                self.bash(command, str(block))

    def python_block(self, block: Block) -> None:
        namespace: dict = {"__name__": "__readme__"}
        try:
            exec(compile(block.body, str(block), "exec"), namespace)
        except Exception as e:
            pytest.fail(f"{block}: {type(e).__name__}: {e}")
        finally:
            namespace.clear()
            self.close_opened()

    def file_block(self, block: Block) -> None:
        first = block.body.split("\n", 1)[0].strip()
        m = re.fullmatch(r"(?:#|//|--)\s*([\w./-]+\.\w+)", first)
        if m and not Path(m.group(1)).is_absolute() and ".." not in m.group(1):
            target = self.work / m.group(1)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.body)


@dataclass
class Outcome:
    ran: int
    skipped: list[tuple[Block, str]]
    timings: list[tuple[float, str]]

    def print_slowest(self, n: int = 8) -> None:
        """The slowest blocks, for whoever keeps the suite's time in check (pytest -s)."""
        for seconds, where in sorted(self.timings, reverse=True)[:n]:
            print(f"{seconds:6.2f} s  {where}")


def run_blocks(blocks: list[Block], tmp_path: Path, monkeypatch) -> Outcome:
    """Every block, in order, in ``tmp_path/work`` after `anonsql demo`."""
    work = tmp_path / "work"
    work.mkdir()
    if SHARED.is_dir():
        (tmp_path / "shared").symlink_to(SHARED)
    monkeypatch.chdir(work)
    monkeypatch.delenv("ANONSQL_DB", raising=False)
    from anonsql.database import Database

    opened: list = []
    init = Database.__init__

    def recording_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        opened.append(self)

    monkeypatch.setattr(Database, "__init__", recording_init)
    runner = Runner(work, opened)
    runner.anonsql(["demo"], "set-up (`anonsql demo`)")
    ran, skipped, timings = 0, [], []
    for block in blocks:
        if block.lang in FILE_LANGS:
            runner.file_block(block)
            continue
        if block.lang not in ("sh", "python"):
            continue
        if block.skip is not None:
            skipped.append((block, block.skip))
            continue
        # adult.duckdb is made from ../shared/data/adult by an earlier block
        needs_shared = "../shared" in block.body or "adult.duckdb" in block.body
        if needs_shared and not SHARED.is_dir():
            skipped.append((block, f"{SHARED} is absent"))
            continue
        start = time.perf_counter()
        if block.lang == "sh":
            runner.shell_block(block)
        else:
            runner.python_block(block)
        timings.append((time.perf_counter() - start, str(block)))
        ran += 1
    return Outcome(ran, skipped, timings)
