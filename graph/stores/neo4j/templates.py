"""Named Cypher templates: every query the Neo4j store runs lives in a ``cypher/*.cypher`` file.

A file starts with a header of ``//`` lines, then the body::

    // name: facts.by_subject
    // params: tenant_id, subject, known_at
    // mode: read
    MATCH ...

A projection that several templates return is written once, in a *fragment* file whose
only header line is ``// fragment: <name>`` (by convention ``_<name>.cypher``); a template
splices it in with a line ``// include: <name>``. A comment marker, not ``string.Template``
or ``str.format``, whose ``$name`` and ``{...}`` are Cypher's own parameter and map syntax.

The loader refuses a file whose body (after splicing) uses a ``$parameter`` it does not
declare, or declares one it never uses (aiosql's rule), an unknown fragment, a missing or
repeated header field, a name used twice, and a read template that writes (reads are
routed to READ servers in a cluster, where a write would fail at run time instead of at
start). A body may hold several statements separated by ``;`` (the schema setup); each is
run on its own.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import cypher
from graph.errors import TemplateError

# The templates ship as data of the ``cypher`` package (the repository's cypher/ folder);
# SGAM_CYPHER_DIR may point elsewhere, e.g. at templates under review.
CYPHER_DIR = Path(cypher.__file__).resolve().parent
HEADER_FIELDS = ("name", "params", "mode")

_HEADER_RE = re.compile(r"^//\s*([a-z_]+)\s*:(.*)$")
_FRAGMENT_RE = re.compile(r"^//\s*fragment\s*:(.*)$")
_INCLUDE_RE = re.compile(r"^\s*//\s*include\s*:(.*)$")
_FRAGMENT_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$")
_PARAM_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# One scanner for the body: string literals, escaped names and comments are matched first
# so that a "$x" inside them is not taken for a parameter; group 1 is a real parameter.
_TOKEN_RE = re.compile(
    r"'(?:[^'\\]|\\.)*'"
    r'|"(?:[^"\\]|\\.)*"'
    r"|`(?:[^`]|``)*`"
    r"|//[^\n]*"
    r"|/\*.*?\*/"
    r"|\$([A-Za-z_][A-Za-z0-9_]*)"
    r"|;",
    re.DOTALL,
)
_WRITE_RE = re.compile(r"\b(CREATE|MERGE|SET|DELETE|REMOVE|DETACH|FOREACH|LOAD)\b", re.IGNORECASE)

Mode = Literal["read", "write"]


@dataclass(frozen=True)
class Template:
    name: str
    params: frozenset[str]
    mode: Mode
    statements: tuple[str, ...]
    statement_params: tuple[frozenset[str], ...]  # the parameters each statement uses
    path: Path
    includes: frozenset[str] = frozenset()  # the fragments spliced in

    @property
    def text(self) -> str:
        """The body of a one-statement template."""
        if len(self.statements) != 1:
            raise _fail(self.path, f"{self.name} holds {len(self.statements)} statements, not one")
        return self.statements[0]


@dataclass(frozen=True)
class Fragment:
    """A piece of Cypher that templates include by name (``// include: <name>``)."""

    name: str
    lines: tuple[str, ...]
    path: Path


def _fail(path: Path, reason: str) -> TemplateError:
    return TemplateError(f"{path.name}: {reason}")


def is_fragment(path: Path) -> bool:
    first = path.read_text(encoding="utf-8").lstrip().split("\n", 1)[0]
    return _FRAGMENT_RE.match(first.strip()) is not None


def parse_fragment(path: Path) -> Fragment:
    lines = path.read_text(encoding="utf-8").strip().splitlines()
    m = _FRAGMENT_RE.match(lines[0].strip()) if lines else None
    if m is None:
        raise _fail(path, "a fragment starts with '// fragment: <name>'")
    name = m.group(1).strip()
    if not _FRAGMENT_NAME_RE.match(name):
        raise _fail(path, f"bad fragment name {name!r}")
    body = tuple(lines[1:])
    if not any(line.strip() and not line.strip().startswith("//") for line in body):
        raise _fail(path, f"fragment {name!r} has no body")
    if any(_INCLUDE_RE.match(line) for line in body):
        raise _fail(path, f"fragment {name!r} includes another; fragments do not nest")
    return Fragment(name=name, lines=body, path=path)


def load_fragments(directory: Path) -> dict[str, Fragment]:
    """Every fragment of a folder by name."""
    out: dict[str, Fragment] = {}
    for path in sorted(directory.glob("*.cypher")):
        if is_fragment(path):
            f = parse_fragment(path)
            if f.name in out:
                raise _fail(path, f"fragment {f.name!r} is also defined in {out[f.name].path.name}")
            out[f.name] = f
    return out


def _splice(
    path: Path, lines: list[str], fragments: Mapping[str, Fragment]
) -> tuple[list[str], frozenset[str]]:
    """The body with each ``// include: <name>`` line replaced by that fragment's lines."""
    out: list[str] = []
    used: set[str] = set()
    for line in lines:
        m = _INCLUDE_RE.match(line)
        if m is None:
            out.append(line)
            continue
        name = m.group(1).strip()
        fragment = fragments.get(name)
        if fragment is None:
            known = ", ".join(sorted(fragments)) or "none"
            raise _fail(path, f"unknown fragment {name!r} in '// include:' (known: {known})")
        out.extend(fragment.lines)
        used.add(name)
    return out, frozenset(used)


def _header(path: Path, lines: list[str]) -> tuple[dict[str, str], int]:
    """The header fields (the leading ``// key: value`` lines) and the first body line."""
    fields: dict[str, str] = {}
    first_body = len(lines)
    for i, line in enumerate(lines):
        m = _HEADER_RE.match(line.strip())
        if m is None:
            first_body = i  # comments after the header belong to the body
            break
        key, value = m.group(1), m.group(2).strip()
        if key == "include":  # the body may start with a fragment
            first_body = i
            break
        if key not in HEADER_FIELDS:
            raise _fail(path, f"unknown header field {key!r} (expected {', '.join(HEADER_FIELDS)})")
        if key in fields:
            raise _fail(path, f"header field {key!r} given twice")
        fields[key] = value
    missing = [f for f in HEADER_FIELDS if f not in fields]
    if missing:
        raise _fail(path, f"missing header field(s): {', '.join(missing)}")
    return fields, first_body


def _declared(path: Path, text: str) -> frozenset[str]:
    names = [p.strip() for p in text.split(",")] if text.strip() else []
    for n in names:
        if not _PARAM_NAME_RE.match(n):
            raise _fail(path, f"bad parameter name {n!r} in the params header")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise _fail(path, f"parameter(s) declared twice: {', '.join(dup)}")
    return frozenset(names)


def _scan(body: str) -> tuple[list[tuple[str, frozenset[str]]], str]:
    """The statements (split on top-level ``;``) with the parameters each uses, and the
    code without literals and comments (for the read-only check)."""
    statements: list[tuple[str, frozenset[str]]] = []
    used: set[str] = set()
    code: list[str] = []
    start = last = 0

    def close(end: int) -> None:
        text = body[start:end].strip()
        if text:
            statements.append((text, frozenset(used)))
        used.clear()

    for m in _TOKEN_RE.finditer(body):
        code.append(body[last : m.start()])
        last = m.end()
        if m.group(1) is not None:
            used.add(m.group(1))
        elif m.group(0) == ";":
            close(m.start())
            start = m.end()
    code.append(body[last:])
    close(len(body))
    return statements, "".join(code)


def parse_template(path: Path, fragments: Mapping[str, Fragment] | None = None) -> Template:
    """One template, with the fragments it includes spliced in (by default those of its
    own folder), checked."""
    if fragments is None:
        fragments = load_fragments(path.parent)
    lines = path.read_text(encoding="utf-8").splitlines()
    fields, first_body = _header(path, lines)
    name, mode = fields["name"], fields["mode"]
    if not _NAME_RE.match(name):
        raise _fail(path, f"bad template name {name!r}")
    if mode not in ("read", "write"):
        raise _fail(path, f"mode must be read or write, not {mode!r}")
    declared = _declared(path, fields["params"])
    body, includes = _splice(path, lines[first_body:], fragments)
    statements, code = _scan("\n".join(body))
    used = set().union(*(p for _, p in statements))
    if not statements:
        raise _fail(path, "the template has no body")
    undeclared = sorted(used - declared)
    if undeclared:
        raise _fail(path, f"{name} uses undeclared parameter(s): {', '.join(undeclared)}")
    unused = sorted(declared - used)
    if unused:
        raise _fail(path, f"{name} declares unused parameter(s): {', '.join(unused)}")
    if mode == "read" and (w := _WRITE_RE.search(code)) is not None:
        raise _fail(path, f"{name} is declared read but writes ({w.group(1)})")
    return Template(
        name=name,
        params=declared,
        mode="read" if mode == "read" else "write",
        statements=tuple(text for text, _ in statements),
        statement_params=tuple(p for _, p in statements),
        path=path,
        includes=includes,
    )


def template_dir() -> Path:
    return Path(os.environ.get("SGAM_CYPHER_DIR") or CYPHER_DIR)


def load_templates(directory: Path | None = None) -> dict[str, Template]:
    """Every template of a folder by name; raises :class:`TemplateError` on the first bad one."""
    directory = directory or template_dir()
    fragments = load_fragments(directory)
    paths = [p for p in sorted(directory.glob("*.cypher")) if not is_fragment(p)]
    if not paths:
        raise TemplateError(f"no .cypher templates in {directory}")
    out: dict[str, Template] = {}
    for path in paths:
        t = parse_template(path, fragments)
        if t.name in out:
            raise _fail(path, f"template name {t.name!r} is also used by {out[t.name].path.name}")
        out[t.name] = t
    return out


def require(templates: dict[str, Template], names: set[str]) -> None:
    """Fail at start when a template the code runs is missing."""
    missing = sorted(names - templates.keys())
    if missing:
        raise TemplateError(f"missing Cypher template(s): {', '.join(missing)}")


__all__ = [
    "CYPHER_DIR",
    "Fragment",
    "Template",
    "TemplateError",
    "is_fragment",
    "load_fragments",
    "load_templates",
    "parse_fragment",
    "parse_template",
    "require",
    "template_dir",
]
