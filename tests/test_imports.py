"""The package's import graph (issue 29): no cycle between its modules nor between its
packages, the imports inside functions included, and the layers the folders stand for.

Every ``import`` and ``from ... import`` of ``anonsql`` is read with ``ast``, at any depth (a
lazy import inside a function is a dependency all the same: it only moves the failure to
the first call). Imports under ``if TYPE_CHECKING:`` are left out: they name types for the
annotations and run at no time.
"""

from __future__ import annotations

import ast
from pathlib import Path

import anonsql

PACKAGE = Path(anonsql.__file__).resolve().parent


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ["anonsql", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _resolve(name: str) -> str | None:
    """The module of ``name`` (a module, or a name inside one)."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(module: str, path: Path) -> set[str]:
    """The modules of anonsql that ``module`` imports, anywhere but TYPE_CHECKING blocks."""
    found: set[str] = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, *([base] if base else [])])
            for alias in node.names:
                # "from pkg import submodule" depends on the submodule itself
                full = f"{base}.{alias.name}"
                found.add(full if full in MODULES else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    out = {_resolve(n) for n in found if n == "anonsql" or n.startswith("anonsql.")}
    return {m for m in out if m is not None and m != module}


GRAPH = {m: _imports(m, p) for m, p in MODULES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm,
    iterative so that a deep package cannot exhaust the recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_the_walk_sees_the_lazy_imports():
    # anonsql/__init__.py imports the API inside __getattr__ only
    assert "anonsql.api" in GRAPH["anonsql"]
    assert "anonsql.run" in GRAPH["anonsql.api"]


def test_no_import_cycle_between_modules():
    assert _cycles(GRAPH) == []


def test_the_cycle_finder_finds_one():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _package(module: str) -> str:
    """The package of anonsql that ``module`` belongs to: ``anonsql.data`` for
    ``anonsql.data.histogram``; a module beside the packages (``anonsql.spec``) is its own."""
    return ".".join(module.split(".")[:2])


def _package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for module, targets in graph.items():
        edges = out.setdefault(_package(module), set())
        edges.update(_package(t) for t in targets if _package(t) != _package(module))
    return out


PACKAGES = _package_graph(GRAPH)


def _package_imports(source: str, target: str) -> list[tuple[str, str]]:
    """The module imports that make package ``source`` depend on package ``target``."""
    return sorted(
        (m, t)
        for m, targets in GRAPH.items()
        if _package(m) == source
        for t in targets
        if _package(t) == target
    )


def test_no_import_cycle_between_packages():
    """A package (``anonsql.data``, ``anonsql.models``, ...) is one layer: modules of two
    packages importing each other, even through others and inside functions, tie the layers
    together, so neither can be read, tested or replaced alone."""
    cycles = _cycles(PACKAGES)
    why = {
        (a, b): _package_imports(a, b)
        for cycle in cycles
        for a in cycle
        for b in sorted(PACKAGES[a] & set(cycle))
    }
    assert cycles == [], why


def test_the_package_graph_folds_modules_into_packages():
    assert _package("anonsql.algorithms.lattice.flash") == "anonsql.algorithms"
    assert _package("anonsql.spec") == "anonsql.spec"
    assert _package_graph({"anonsql.a.x": {"anonsql.b.y"}, "anonsql.b.z": {"anonsql.a"}}) == {
        "anonsql.a": {"anonsql.b"},
        "anonsql.b": {"anonsql.a"},
    }
    assert _cycles(_package_graph({"anonsql.a.x": {"anonsql.b.y"}, "anonsql.b.z": {"anonsql.a"}}))


#: the run's pipeline, lowest first: a package imports only those before it. The engines run
#: the SQL; the hierarchies and the database's catalogs; what is read of the source (the
#: histogram and its classes); the measures and the privacy models, compiled to SQL or run on
#: classes; the algorithms, which decide the recoding; the one writer, which publishes it.
PIPELINE = (
    "anonsql.backend",
    "anonsql.hierarchy",
    "anonsql.database",
    "anonsql.data",
    "anonsql.metrics",
    "anonsql.models",
    "anonsql.algorithms",
    "anonsql.output",
)


def test_the_pipeline_imports_downwards():
    wrong = {
        (low, high): _package_imports(low, high)
        for i, low in enumerate(PIPELINE)
        for high in PIPELINE[i + 1 :]
        if high in PACKAGES[low]
    }
    assert wrong == {}


def _under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_spec_is_a_leaf():
    """The Spec is named by the orchestrator, the options, the writer and every algorithm:
    it imports nothing of anonsql but the errors."""
    assert GRAPH["anonsql.spec"] <= {"anonsql.errors"}


#: what the algorithms never import: the layers above them (the run, the option table
#: that lists them, the surfaces) and the measures of a release, which read the algorithms
ABOVE_ALGORITHMS = (
    "anonsql.run",
    "anonsql.options",
    "anonsql.api",
    "anonsql.connection",
    "anonsql.spec_file",
    "anonsql.cli",
    "anonsql.dialect",
    "anonsql.evaluation",
)


def test_algorithms_import_nothing_above_them():
    wrong = sorted(
        (m, t)
        for m, targets in GRAPH.items()
        if _under(m, "anonsql.algorithms")
        for t in targets
        if any(_under(t, above) for above in ABOVE_ALGORITHMS)
    )
    assert wrong == []


def test_a_family_imports_no_other_family():
    """A new algorithm is one folder: a family reads the shared base and catalog, never
    another family's modules."""
    families = {p.name for p in (PACKAGE / "algorithms").iterdir() if (p / "__init__.py").exists()}

    def family(m: str) -> str | None:
        parts = m.split(".")
        return parts[2] if len(parts) > 2 and parts[2] in families else None

    wrong = sorted(
        (m, t)
        for m, targets in GRAPH.items()
        for t in targets
        if family(m) is not None and family(t) not in (None, family(m))
    )
    assert wrong == []
