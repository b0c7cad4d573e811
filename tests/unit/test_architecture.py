"""The import structure: no import circles anywhere, and the layers' rules.

The import graph is built with ``ast`` over every first-party module, counting every
import statement wherever it is written: at the top, inside functions (lazy imports) and
under ``if TYPE_CHECKING:``. ``from package import name`` counts as an import of the
submodule when ``name`` is one. import-linter (``lint-imports``, contracts in
pyproject.toml) checks the layers too; this test also covers the standard library
(``sqlite3``) and names the circle when there is one.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterable
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("graph", "api", "extraction", "cypher")
# The domain: what every other part builds on. No driver, no HTTP, no outer layer.
DOMAIN = (
    "graph.errors",
    "graph.ledger",
    "graph.model",
    "graph.port",
    "graph.queue",
    "graph.schema",
    "graph.service",
    "graph.temporal",
    "graph.timeutil",
)
DOMAIN_FORBIDDEN = ("sqlite3", "neo4j", "httpx", "fastapi", "starlette", "uvicorn")


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def first_party_modules(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for pkg in packages:
        for path in sorted((root / pkg).rglob("*.py")):
            out[module_name(path, root)] = path
    return out


def imports_of(name: str, path: Path, modules: set[str]) -> tuple[set[str], set[str]]:
    """(first-party modules, top-level external packages) that ``name`` imports anywhere
    in its source."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    internal: set[str] = set()
    external: set[str] = set()

    def target(dotted: str) -> None:
        # The longest first-party prefix: ``import graph.stores.sqlite.store`` → that module.
        parts = dotted.split(".")
        for i in range(len(parts), 0, -1):
            candidate = ".".join(parts[:i])
            if candidate in modules:
                internal.add(candidate)
                return
        if parts[0] not in PACKAGES:
            external.add(parts[0])

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = name.split(".")
                # In a package's __init__, level 1 is the package itself.
                drop = node.level - 1 if is_package else node.level
                base_parts = base_parts[: len(base_parts) - drop] if drop else base_parts
                base = ".".join([*base_parts, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                target(sub if sub in modules else base)
    internal.discard(name)
    return internal, external


@cache
def import_graph() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    modules = first_party_modules(ROOT, PACKAGES)
    names = set(modules)
    internal: dict[str, set[str]] = {}
    external: dict[str, set[str]] = {}
    for name, path in modules.items():
        internal[name], external[name] = imports_of(name, path, names)
    return internal, external


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle as a path ``[a, b, ..., a]``, or None (iterative DFS)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for root in sorted(graph):
        if state.get(root):
            continue
        path = [root]
        state[root] = 1
        stack = [iter(sorted(graph[root]))]
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                stack.pop()
                state[path.pop()] = 2
                continue
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(graph.get(nxt, ()))))
    return None


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen = {start}
    todo = [start]
    while todo:
        for n in graph.get(todo.pop(), ()):
            if n not in seen:
                seen.add(n)
                todo.append(n)
    return seen


# -- the checker checks ---------------------------------------------------------------------
def test_the_checker_finds_and_names_a_circle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_the_checker_sees_lazy_relative_and_type_checking_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from . import a\n")
    (pkg / "a.py").write_text(
        "from typing import TYPE_CHECKING\nimport sqlite3\n"
        "if TYPE_CHECKING:\n    from pkg.b import X\n"
    )
    (pkg / "b.py").write_text("def f():\n    from .a import thing\n    import neo4j.time\n")
    modules = first_party_modules(tmp_path, ["pkg"])
    names = set(modules)
    got = {n: imports_of(n, p, names) for n, p in modules.items()}
    assert got["pkg"] == ({"pkg.a"}, set())
    assert got["pkg.a"] == ({"pkg.b"}, {"typing", "sqlite3"})
    assert got["pkg.b"] == ({"pkg.a"}, {"neo4j"})
    assert find_cycle({n: i for n, (i, _) in got.items()}) == ["pkg.a", "pkg.b", "pkg.a"]


# -- the repository's rules -----------------------------------------------------------------
def test_there_is_no_import_circle_anywhere() -> None:
    internal, _ = import_graph()
    assert len(internal) > 50  # every module was found
    cycle = find_cycle(internal)
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_the_domain_imports_no_driver_no_http_and_no_outer_layer() -> None:
    internal, external = import_graph()
    for mod in DOMAIN:
        for dep in sorted(reachable(internal, mod)):
            assert not dep.startswith(("graph.stores", "graph.retrieval", "api", "extraction")), (
                f"{mod} reaches {dep}"
            )
            bad = external[dep] & set(DOMAIN_FORBIDDEN)
            assert not bad, f"{mod} reaches {dep}, which imports {sorted(bad)}"


def test_only_the_neo4j_store_imports_the_driver() -> None:
    _, external = import_graph()
    importers = sorted(m for m, ext in external.items() if "neo4j" in ext)
    assert importers
    assert all(m.startswith("graph.stores.neo4j.") for m in importers), importers
    sqlite_users = sorted(m for m, ext in external.items() if "sqlite3" in ext)
    assert all(m.startswith("graph.stores.sqlite.") for m in sqlite_users), sqlite_users


def test_retrieval_and_the_stores_keep_to_their_side() -> None:
    internal, _ = import_graph()
    for mod, deps in internal.items():
        if mod.startswith("graph.retrieval"):
            assert not any(d.startswith("graph.stores") for d in deps), (mod, deps)
        for this, other in (("sqlite", "neo4j"), ("neo4j", "sqlite")):
            if mod.startswith(f"graph.stores.{this}"):
                assert not any(d.startswith(f"graph.stores.{other}") for d in deps), (mod, deps)
        if mod.startswith("graph"):
            assert not any(d.startswith(("api", "extraction")) for d in deps), (mod, deps)
        if mod.startswith("extraction"):
            assert not any(d.startswith("api") for d in deps), (mod, deps)


def test_opening_sqlite_never_imports_the_neo4j_driver() -> None:
    import subprocess
    import sys

    code = (
        "import sys, tempfile, graph\n"
        "s = graph.open_store(f'sqlite:///{tempfile.mkdtemp()}/x.db')\n"
        "s.close()\n"
        "print(sorted(m for m in sys.modules if m == 'neo4j' or m.startswith('neo4j.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_every_package_is_packaged() -> None:
    """setuptools' package list is explicit: a package missing from it is missing from
    the wheel (and the Docker image) while every test from the source tree passes."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    found = {
        module_name(p.parent / "__init__.py", ROOT)
        for pkg in PACKAGES
        for p in (ROOT / pkg).rglob("__init__.py")
    }
    # folders of static files are listed too (setuptools warns about unlisted ones);
    # they hold no Python
    static = {name for name in listed if name.startswith("api.ui.static")}
    assert static == {
        ".".join(d.relative_to(ROOT).parts)
        for d in [ROOT / "api/ui/static", *(ROOT / "api/ui/static").rglob("*")]
        if d.is_dir() and d.name.isidentifier()
    }
    assert not list((ROOT / "api/ui/static").rglob("*.py"))
    assert listed - static == found
