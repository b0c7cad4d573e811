"""Mutation check of the tenant filters: remove each one, run the isolation tests, see who notices.

Every query that filters by tenant is found in the stores' query text — the SQL strings
of graph/stores/sqlite/*.py and the Cypher templates in cypher/*.cypher — and each
*mutant* removes its tenant filter (by default every tenant filter of one query at once;
``--per-filter`` removes them one by one). A mutant is *killed* when the chosen tests fail
with it, and *survives* when they pass: then no test would notice that query serving
another tenant's data.

Run on demand (not part of ``make test``; one mutant costs one pytest run)::

    PYTHONPATH=. HF_HUB_OFFLINE=1 .venv/bin/python tests/mutants/tenant_filters.py sqlite
    PYTHONPATH=. HF_HUB_OFFLINE=1 .venv/bin/python tests/mutants/tenant_filters.py neo4j
    .venv/bin/python tests/mutants/tenant_filters.py --list        # the filters found

Cypher mutants run on a private Neo4j the script starts and stops (tools/neo4j/neo4j.sh
with a state dir of its own): a write template without its tenant filter (a purge, an
episode deletion) would delete other tenants' data, and on a shared server that is other
people's tests. ``NEO4J_URI`` points them at a server of your own instead.

What a mutation does, keeping the query valid so that a kill means a test saw data of
another tenant (or missed its own), not a syntax error:

- SQL: ``[x.]tenant_id = ?`` (or ``= :name``) becomes ``? IS NOT NULL`` (the placeholder
  stays, so positional parameters still line up); a join ``a.tenant_id = b.tenant_id``
  becomes ``1 = 1``. Only string literals are touched, never docstrings or comments.
- Cypher: ``x.tenant_id = $p`` in a WHERE drops out of its conjunction (``$p IS NOT NULL``
  when it stands alone); ``tenant_id: $p`` in a MATCH or MERGE pattern is removed from
  the map. A ``USING INDEX x:L(tenant_id, ...)`` hint on the same variable goes too, and a
  parameter no longer used stays declared, used by a ``WITH $p AS unused_p_`` first in the
  query (the store still passes it, and the loader refuses a call with an undeclared one).
  Property writes (SET, CREATE) are not filters and are left alone.

SQLite mutants run in a copy of the repository (PYTHONPATH points at it); Cypher mutants
run against a copy of cypher/ named by SGAM_CYPHER_DIR.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The tests that decide: tenant isolation on both stores, the store contract, the queue
# and the indexer. Small on purpose: every surviving mutant runs all of them.
TESTS = [
    "tests/conformance/test_tenant_isolation.py",
    "tests/conformance/test_tenant_isolation_erasure.py",
    "tests/conformance/test_store_contract.py::test_tenants_never_see_each_other",
    "tests/integration/test_indexer.py::test_indexing_one_tenant_never_touches_another",
    "tests/api/test_isolation.py",
]
SQLITE_ONLY = "not neo4j"
NEO4J_ONLY = "neo4j"


@dataclass(frozen=True)
class Site:
    """One tenant filter: where it is and the text that replaces it."""

    path: Path
    query: str  # a name for the query it belongs to (file:line of the query's start)
    start: int
    end: int
    replacement: str
    text: str

    @property
    def line(self) -> int:
        return self.path.read_text()[: self.start].count("\n") + 1


# -- SQL ---------------------------------------------------------------------------------
_SQL_PARAM = re.compile(r"(?<![\w.])(?:\w+\.)?tenant_id\s*=\s*(\?|:\w+)")
_SQL_JOIN = re.compile(r"(?<![\w.])(?:\w+\.)?tenant_id\s*=\s*\w+\.tenant_id\b")


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        value = first.value if isinstance(first, ast.Expr) else None
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            ids.add(id(value))
    return ids


def _string_spans(source: str) -> Iterator[tuple[int, int]]:
    """(start, end) offsets of each string literal expression that is not a docstring."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    offsets = [0]
    for line in source.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))

    def at(lineno: int, col: int) -> int:
        # col_offset counts UTF-8 bytes
        line = source[offsets[lineno - 1] : offsets[lineno]]
        return offsets[lineno - 1] + len(line.encode()[:col].decode())

    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        is_str = isinstance(node, ast.Constant) and isinstance(node.value, str)
        if is_str or isinstance(node, ast.JoinedStr):
            if id(node) not in skip and node.end_lineno is not None:
                end = at(node.end_lineno, node.end_col_offset or 0)
                yield at(node.lineno, node.col_offset), end
            continue  # an f-string's parts are inside its span already
        todo.extend(ast.iter_child_nodes(node))


def sql_sites(path: Path) -> list[Site]:
    source = path.read_text()
    sites = []
    for start, end in sorted(_string_spans(source)):
        segment = source[start:end]
        # One query per ';'-separated statement of a literal (scripts hold many).
        stmt_starts = [0] + [m.end() for m in re.finditer(";", segment)]
        for m in sorted(
            [*_SQL_PARAM.finditer(segment), *_SQL_JOIN.finditer(segment)], key=lambda m: m.start()
        ):
            stmt = max(s for s in stmt_starts if s <= m.start())
            line = source[: start + stmt].count("\n") + 1
            repl = f"{m.group(1)} IS NOT NULL" if m.re is _SQL_PARAM else "1 = 1"
            sites.append(
                Site(
                    path,
                    f"{path.relative_to(ROOT)}:{line}",
                    start + m.start(),
                    start + m.end(),
                    repl,
                    m.group(0),
                )
            )
    return sites


# -- Cypher ------------------------------------------------------------------------------
_COMMENT = re.compile(r"//[^\n]*|'(?:[^'\\]|\\.)*'")
_KEYWORD = re.compile(r"\b(MATCH|MERGE|CREATE|SET|WHERE|WITH|RETURN|UNWIND|DELETE|REMOVE|CALL)\b")
_CY_WHERE = re.compile(r"(?<![\w.])(\w+)\.tenant_id\s*=\s*(\$\w+|\w+\.tenant_id\b)")
_CY_MAP = re.compile(r"[(\[](\w*)\s*:\s*`?\w+`?\s*\{([^{}]*)\}")
_CY_ENTRY = re.compile(r"(,\s*)?\btenant_id\s*:\s*(\$\w+|\w+\.\w+)(\s*,\s*)?")


def _masked(text: str) -> str:
    """The text with comments and string literals blanked (same offsets)."""
    return _COMMENT.sub(lambda m: " " * len(m.group(0)), text)


def _clause(masked: str, pos: int) -> str:
    last = None
    for m in _KEYWORD.finditer(masked, 0, pos):
        last = m.group(1)
    return last or ""


def cypher_sites(path: Path) -> list[Site]:
    text = path.read_text()
    masked = _masked(text)
    name = str(path.relative_to(ROOT))
    sites = []
    for m in _CY_WHERE.finditer(masked):
        if _clause(masked, m.start()) != "WHERE":
            continue  # a SET or a projection, not a filter
        before = re.search(r"\bAND\s+$", masked[: m.start()])
        after = re.match(r"\s+AND\b\s*", masked[m.end() :])
        if after:
            start, end, repl = m.start(), m.end() + after.end(), ""
        elif before:
            start, end, repl = before.start(), m.end(), ""
        else:
            p = m.group(2)
            start, end, repl = m.start(), m.end(), f"{p} IS NOT NULL" if p[0] == "$" else "true"
        sites.append(Site(path, name, start, end, repl, text[m.start() : m.end()]))
    for m in _CY_MAP.finditer(masked):
        if _clause(masked, m.start()) not in ("MATCH", "MERGE", "WHERE"):
            continue  # CREATE sets the property; it filters nothing
        body_start = m.start(2)
        for e in _CY_ENTRY.finditer(m.group(2)):
            lead, trail = e.group(1), e.group(3)
            s, t = body_start + e.start(), body_start + e.end()
            # Keep exactly one separator between the neighbours left and right.
            repl = ", " if lead and trail else ""
            sites.append(Site(path, name, s, t, repl, text[s:t].strip(", ")))
    return sorted(sites, key=lambda s: s.start)


def _fix_cypher(text: str, removed_vars: set[str], fragments: dict[str, str]) -> str:
    """Drop index hints on tenant_id for the mutated variables, and unused parameters."""
    for v in removed_vars:
        text = re.sub(rf"^\s*USING INDEX {v}:\w+\(tenant_id[^)]*\)\s*\n", "", text, flags=re.M)
    header = re.search(r"^//\s*params\s*:(.*)$", text, flags=re.M)
    if header is None:
        return text
    included = re.findall(r"^\s*//\s*include\s*:\s*(\w+)", text, flags=re.M)
    body = _masked(text) + "".join(_masked(fragments.get(f, "")) for f in included)
    params = [p.strip() for p in header.group(1).split(",") if p.strip()]
    gone = [p for p in params if not re.search(rf"\${p}\b", body)]
    if not gone:
        return text
    # The store still passes the parameter and the loader refuses a call that passes one
    # the template does not declare (and a template that declares one it does not use):
    # keep it declared and used where it filters nothing, first thing in the query (after
    # a CYPHER version line), so that a kill means a test saw data, not a refused call.
    uses = "".join(f"WITH ${p} AS unused_{p}_\n" for p in gone)
    lines = text.splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if ln.strip() and not ln.lstrip().startswith("//"))
    if lines[at].lstrip().upper().startswith("CYPHER"):
        at += 1
    return "".join([*lines[:at], uses, *lines[at:]])


def _fragments(cypher_dir: Path) -> dict[str, str]:
    out = {}
    for f in cypher_dir.glob("_*.cypher"):
        m = re.search(r"^//\s*fragment\s*:\s*(\w+)", f.read_text(), flags=re.M)
        if m:
            out[m.group(1)] = f.read_text()
    return out


# -- mutants -----------------------------------------------------------------------------
@dataclass
class Mutant:
    sites: list[Site]

    @property
    def name(self) -> str:
        first = self.sites[0]
        if len(self.sites) == 1:
            return f"{first.path.relative_to(ROOT)}:{first.line} `{first.text}`"
        return f"{first.query} ({len(self.sites)} filters)"

    def apply(self, original: str, cypher_fragments: dict[str, str] | None) -> str:
        text = original
        for s in sorted(self.sites, key=lambda s: s.start, reverse=True):
            text = text[: s.start] + s.replacement + text[s.end :]
        if cypher_fragments is not None:
            variables = {
                m.group(1) for s in self.sites for m in [re.match(r"(\w+)\.", s.text)] if m
            }
            for s in self.sites:  # a map entry: the variable is the pattern's
                if s.text.startswith("tenant_id"):
                    pat = original.rfind("(", 0, s.start), original.rfind("[", 0, s.start)
                    head = original[max(pat) + 1 : s.start]
                    if v := re.match(r"\s*(\w+)", head):
                        variables.add(v.group(1))
            text = _fix_cypher(text, variables, cypher_fragments)
        return text


def mutants(sites: list[Site], per_filter: bool) -> list[Mutant]:
    if per_filter:
        return [Mutant([s]) for s in sites]
    groups: dict[tuple[Path, str], list[Site]] = {}
    for s in sites:
        groups.setdefault((s.path, s.query), []).append(s)
    return [Mutant(g) for g in groups.values()]


def find(store: str) -> list[Site]:
    if store == "sqlite":
        files = sorted((ROOT / "graph/stores/sqlite").glob("*.py"))
        return [s for p in files for s in sql_sites(p)]
    return [s for p in sorted((ROOT / "cypher").glob("*.cypher")) for s in cypher_sites(p)]


# Third-party modules the tests import, loaded once by this process: each mutant then
# runs in a fork of it, and only the project's own (mutated) modules are imported anew.
# On a loaded machine that saves most of a pytest start.
PRELOAD = (
    "numpy",
    "torch",
    "sentence_transformers",
    "fastapi",
    "fastapi.testclient",
    "starlette",
    "pydantic",
    "pydantic_settings",
    "httpx",
    "neo4j",
    "uvicorn",
    "typer",
    "pytest",
    "_pytest.python",
    "hypothesis",
)  # not pytest plugins: pytest warns


def preload() -> None:
    import importlib

    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def run_tests(env: dict[str, str], cwd: Path, marker: str, tests: list[str]) -> tuple[bool, str]:
    """pytest -x on the tests, in a fork of this process (see PRELOAD); (passed, summary)."""
    # Plugins such as anyio came in with the preloaded modules, before pytest could
    # rewrite their asserts; they have none we rely on.
    args = [
        "-x",
        "-q",
        "-p",
        "no:cacheprovider",
        "-W",
        "ignore::pytest.PytestAssertRewriteWarning",
        "-m",
        marker,
        *tests,
    ]
    with tempfile.TemporaryFile(mode="w+") as out:
        pid = os.fork()
        if pid == 0:  # the child: the mutated tree first on the path, then pytest
            code = 3
            try:
                os.dup2(out.fileno(), 1)
                os.dup2(out.fileno(), 2)
                os.chdir(cwd)
                os.environ.clear()
                os.environ.update(env)
                sys.path[:0] = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
                import pytest

                code = int(pytest.main(args))
            except BaseException:
                import traceback

                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        out.seek(0)
        lines = out.read().strip().splitlines()
    passed = os.waitstatus_to_exitcode(status) == 0
    if os.environ.get("SGAM_MUTANTS_DEBUG"):
        print("\n".join(lines[-60:]), file=sys.stderr)
    return passed, next((ln for ln in reversed(lines) if ln.strip()), "")


def private_neo4j(state: Path, env: dict[str, str]) -> tuple[str, Callable[[], None]]:
    """Start a Neo4j of our own; its bolt URI and the function that stops it (to call
    before ``state`` is removed: the launcher finds the server by its pid file there)."""
    launcher = ROOT / "tools" / "neo4j" / "neo4j.sh"
    penv = {**env, "SGAM_NEO4J_STATE_DIR": str(state)}

    def down() -> None:
        subprocess.run(
            ["bash", str(launcher), "down"], env=penv, check=False, capture_output=True, timeout=300
        )

    try:
        out = subprocess.run(
            ["bash", str(launcher), "up"],
            env=penv,
            capture_output=True,
            text=True,
            check=True,
            timeout=1200,
        )
    except BaseException:
        down()
        raise
    return out.stdout.strip().splitlines()[-1], down


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("store", nargs="?", choices=["sqlite", "neo4j"], default="sqlite")
    ap.add_argument("--per-filter", action="store_true", help="one mutant per filter")
    ap.add_argument("--list", action="store_true", help="list the filters and exit")
    ap.add_argument("--match", default="", help="only mutants whose name contains this")
    ap.add_argument("--tests", nargs="*", default=TESTS)
    ap.add_argument(
        "--range",
        default="",
        metavar="A:B",
        help="only mutants A to B (1-based, as numbered in the output)",
    )
    ap.add_argument("--only", default="", metavar="N,M,...", help="only these mutants")
    args = ap.parse_args()
    sites = find(args.store)
    if args.list:
        for s in sites:
            print(f"{s.path.relative_to(ROOT)}:{s.line}: {s.text}")
        print(f"{len(sites)} tenant filters in {len({(s.path, s.query) for s in sites})} queries")
        return 0
    numbered = list(enumerate(mutants(sites, args.per_filter), 1))
    if args.range:
        a, _, b = args.range.partition(":")
        numbered = [(n, m) for n, m in numbered if int(a or 1) <= n <= int(b or len(numbered))]
    if args.only:
        wanted = {int(n) for n in args.only.split(",")}
        numbered = [(n, m) for n, m in numbered if n in wanted]
    numbered = [(n, m) for n, m in numbered if args.match in m.name]
    todo = [m for _, m in numbered]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    # The Neo4j's stop is registered after the temporary dir: it runs first, while the
    # launcher's pid file is still there.
    with contextlib.ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="sgam-mutants-")))
        if args.store == "sqlite":
            files = subprocess.run(
                ["git", "ls-files", "-co", "--exclude-standard"],
                cwd=ROOT,
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()
            for f in files:
                if (ROOT / f).is_file():
                    (work / f).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(ROOT / f, work / f)
            env["PYTHONPATH"] = str(work)
            cwd, marker, fragments = work, SQLITE_ONLY, None
        else:
            if not env.get("NEO4J_URI"):
                env["NEO4J_URI"], down = private_neo4j(work / "neo4j", env)
                stack.callback(down)
            shutil.copytree(ROOT / "cypher", work / "cypher")
            env["SGAM_CYPHER_DIR"] = str(work / "cypher")
            env["PYTHONPATH"] = str(ROOT)
            cwd, marker, fragments = ROOT, NEO4J_ONLY, _fragments(ROOT / "cypher")
        preload()
        ok, last = run_tests(env, cwd, marker, args.tests)
        if not ok:
            print(f"the tests fail without any mutant: {last}", file=sys.stderr)
            return 2
        survivors = []
        t0 = time.monotonic()
        for n, m in numbered:
            path = m.sites[0].path
            target = (
                (work / path.relative_to(ROOT))
                if args.store == "sqlite"
                else (work / "cypher" / path.name)
            )
            original = path.read_text()
            mutated = m.apply(original, fragments)
            target.write_text(mutated)
            try:
                passed, last = run_tests(env, cwd, marker, args.tests)
            finally:
                target.write_text(original)
            verdict = "SURVIVED" if passed else "killed"
            if passed:
                survivors.append(m)
            print(f"[{n}] {verdict:8} {m.name}  ({last})", flush=True)
        checked = sum(len(m.sites) for m in todo)
        print(
            f"\n{args.store}: {len(todo)} mutants ({checked} tenant filters) checked in"
            f" {time.monotonic() - t0:.0f} s: {len(todo) - len(survivors)} killed,"
            f" {len(survivors)} survived"
        )
        for m in survivors:
            print(f"  survived: {m.name}")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
