"""Plain words for the user: the papers are named by their method and authors, never by the
project's internal numbering ("seed 003"), in the README, the documentation site, every
command's help, every message and string of the package, the public API's docstrings and
the HTML report."""

from __future__ import annotations

import ast
import re

import click

from tests.helpers.data import ROOT

SEED = re.compile(r"\bseeds?\s+00[0-4]\b", re.I)


def _hits(text: str) -> list[str]:
    return [text[max(0, m.start() - 40) : m.end() + 20] for m in SEED.finditer(text)]


def test_readme_and_docs_name_the_papers():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    found = {str(p.relative_to(ROOT)): _hits(p.read_text()) for p in pages}
    assert {k: v for k, v in found.items() if v} == {}


def _commands(group: click.Command, path: str = "anonsql"):
    yield path, group
    for name, sub in getattr(group, "commands", {}).items():
        yield from _commands(sub, f"{path} {name}")


def test_help_texts_name_the_papers():
    from anonsql.cli.main import cli

    found = {}
    for path, command in _commands(cli):
        ctx = click.Context(command, info_name=path)
        text = command.get_help(ctx)
        if _hits(text):
            found[path] = _hits(text)
    assert found == {}


def _docstring_nodes(tree: ast.AST) -> set[int]:
    """Docstrings of modules, classes and functions that are not click commands (those are
    help texts and stay in the check)."""
    out = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        body = node.body
        if not (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)):
            continue
        decorators = [ast.unparse(d) for d in getattr(node, "decorator_list", [])]
        if any("command" in d or "group" in d for d in decorators):
            continue
        out.add(id(body[0].value))
    return out


def test_messages_and_strings_name_the_papers():
    """Every string literal of the package but internal docstrings: error messages, warnings,
    guarantees, descriptions of models and algorithms, the report's HTML template."""
    found = {}
    for path in sorted((ROOT / "anonsql").rglob("*.py")):
        tree = ast.parse(path.read_text())
        skip = _docstring_nodes(tree)
        for node in ast.walk(tree):
            is_text = isinstance(node, ast.Constant) and isinstance(node.value, str)
            if is_text and id(node) not in skip and _hits(node.value):
                found[f"{path.relative_to(ROOT)}:{node.lineno}"] = _hits(node.value)
    assert found == {}


def test_public_api_docstrings_name_the_papers():
    import anonsql
    from anonsql import api

    found = {}
    for name in dir(api):
        obj = getattr(api, name)
        if getattr(obj, "__module__", None) != "anonsql.api":
            continue
        docs = [obj.__doc__ or ""]
        docs += (
            [getattr(m, "__doc__", None) or "" for m in vars(obj).values()]
            if isinstance(obj, type)
            else []
        )
        hits = [h for d in docs for h in _hits(d)]
        if hits:
            found[name] = hits
    assert found == {}
    assert not _hits(anonsql.__doc__ or "")


def test_the_html_report_names_the_papers(db):
    """A run of each algorithm whose guarantee cites a paper, its report page."""
    from anonsql.demo.setup import setup_demo
    from anonsql.evaluation.report import build_report, render_html
    from anonsql.run import anonymize
    from anonsql.spec import Spec

    setup_demo(db, rows=600)
    specs = [
        Spec(
            qis=["age", "sex", "zip"],
            sensitive="income",
            k=3,
            l=2,
            suppression=0.05,
            columns=["age", "sex", "zip", "income"],
            algorithm="rho-gain",
            rho=1,
            output="o1",
        ),
        Spec(qis=["age", "sex"], k=3, columns=["age", "sex"], algorithm="greedy", output="o2"),
        Spec(
            qis=["age", "sex", "zip"],
            sensitive="income",
            k=3,
            l=2,
            columns=["age", "sex", "zip", "income"],
            algorithm="mondrian",
            output="o3",
        ),
    ]
    for spec in specs:
        result = anonymize(db, "census", spec)
        page = render_html(build_report(db, result.run_id))
        assert _hits(page) == [], spec.algorithm
