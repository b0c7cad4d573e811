"""Limits the HTTP layer checks on a raw JSON body, before anything parses it.

Python's JSON parser and pydantic's serializer recurse: a body nested thousands deep is a
RecursionError (a 500) before any model sees it. So the body's nesting is measured
first, without recursion and in linear passes of the regex engine; a body nesting deeper
than free-form JSON may (:data:`graph.model.MAX_JSON_DEPTH`) plus the few levels of the
request's own envelope is refused with a 422 naming the top-level member that holds it.
Fields within the bound are checked exactly by the models themselves.
"""

from __future__ import annotations

import json
import math
import re
from itertools import accumulate
from typing import Any

from graph.errors import ItemError, ValidationError
from graph.model import MAX_JSON_DEPTH, too_deep

# The deepest envelope around a free-form field: the schema's event_mappings[i] (2).
ENVELOPE_DEPTH = 8
MAX_BODY_DEPTH = MAX_JSON_DEPTH + ENVELOPE_DEPTH

_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_EMPTY_PAIR = re.compile(rb"\[\]|\{\}")
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)


def nests_deeper_than(body: bytes, limit: int) -> bool:
    """Whether the JSON text ``body`` nests objects and arrays more than ``limit`` deep.

    Strings are cut out, then every innermost ``[]``/``{}`` pair is removed once per
    level: ``limit`` passes at most, each linear. What is left of unbalanced text (say
    ``{"a": [[[[…`` never closed) is measured by its running depth: the parser would call
    it malformed, but only after recursing once per level, past Python's stack (a 500).
    """
    brackets = _outside_strings(body).translate(None, _NOT_BRACKET)
    for _ in range(limit):
        if not brackets:
            return False
        reduced = _EMPTY_PAIR.sub(b"", brackets)
        if reduced == brackets:  # nothing left to pair: unbalanced
            return max(accumulate(1 if b in b"[{" else -1 for b in brackets)) > limit
        brackets = reduced
    return bool(brackets) and _EMPTY_PAIR.search(brackets) is not None


def _outside_strings(body: bytes) -> bytes:
    """The JSON text without its strings, by bytes operations only (no per-string work).

    Escapes go first: an escaped backslash, then an escaped quote (in that order, so
    ``\\\\"`` stays a closing quote); every quote left delimits a string, so the
    text between quote 2k and 2k+1 is outside.
    """
    flat = body.replace(b"\\\\", b"").replace(b'\\"', b"")
    return b"".join(flat.split(b'"')[::2])


def _member_too_deep(body: bytes, limit: int) -> str | None:
    """The top-level member in which the body first nests past ``limit`` levels."""
    depth = 0
    member: str | None = None
    for m in _TOKEN.finditer(body):
        token = m.group()
        if token[:1] == b'"':
            if depth == 1:
                member = token[1:-1].decode("utf-8", "replace")  # the last key seen
            continue
        depth += 1 if token in (b"[", b"{") else -1
        if depth > limit:
            return member
    return None


def body_nesting_error(body: bytes) -> ValidationError | None:
    """A 422 for a JSON body nested deeper than :data:`MAX_BODY_DEPTH`, else None."""
    if not nests_deeper_than(body, MAX_BODY_DEPTH):
        return None
    member = _member_too_deep(body, MAX_BODY_DEPTH)
    return ValidationError([ItemError(reason=too_deep(MAX_JSON_DEPTH), field=member)])


def json_media_type(content_type: bytes) -> bool:
    """Whether a ``Content-Type`` value names JSON (``application/json``, ``…+json``): the
    bodies the portability checks read, and the only ones a JSON route may parse."""
    media = content_type.split(b";", 1)[0].strip().lower()
    return media == b"application/json" or (
        media.startswith(b"application/") and media.endswith(b"+json")
    )


INT64 = 2**63
# A \u escape of a UTF-16 surrogate; paired ones (emoji) are fine, lone ones are not text.
SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class NotPortableJSON(ValueError):
    """JSON the stores cannot hold as sent."""


def _reject_constant(name: str) -> Any:
    raise NotPortableJSON(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise NotPortableJSON(f"{text} is out of the range of a double")
    return value


def _int64(text: str) -> int:
    # By length first: Python refuses to convert an integer of over 4,300 digits at all.
    if len(text) <= 20:
        value = int(text)
        if -INT64 <= value < INT64:
            return value
    shown = text if len(text) <= 40 else f"{text[:20]}... ({len(text)} characters)"
    raise NotPortableJSON(f"{shown} does not fit in a 64-bit integer")


def _unique_members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data = dict(pairs)
    if len(data) < len(pairs):
        seen: set[str] = set()
        for name, _ in pairs:
            if name in seen:
                shown = name if len(name) <= 40 else f"{name[:20]}... ({len(name)} characters)"
                raise NotPortableJSON(f"the member {shown!r} appears twice in one object")
            seen.add(name)
    return data


def load_portable(body: bytes, *, unique_members: bool = False) -> Any:
    """The JSON text ``body`` as the stores can hold it. Raises :class:`NotPortableJSON`
    for what JSON (RFC 8259) does not carry and Python's parser accepts: ``NaN`` and
    ``Infinity``, numbers past a double or a 64-bit integer, lone UTF-16 surrogates, and
    with ``unique_members`` an object naming a member twice (RFC 8259 leaves its meaning
    open: Python keeps the last, a proxy or another parser may read the first);
    ``ValueError`` (``JSONDecodeError``, ``UnicodeDecodeError``) for malformed text.
    Bound the nesting first (:func:`body_nesting_error`): the parser recurses."""
    data = json.loads(
        body,
        parse_constant=_reject_constant,
        parse_float=_finite_float,
        parse_int=_int64,
        object_pairs_hook=_unique_members if unique_members else None,
    )
    if SURROGATE_ESCAPE.search(body):
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise NotPortableJSON(
                "a string holds a lone UTF-16 surrogate (not Unicode text)"
            ) from None
    return data


def json_body_problem(body: bytes) -> str | None:
    """Why a JSON body cannot be stored as sent (:func:`load_portable`), or None.
    Malformed JSON is left to FastAPI (400 as well)."""
    try:
        load_portable(body, unique_members=True)
    except NotPortableJSON as e:
        return str(e)
    except ValueError:  # malformed: FastAPI answers it
        return None
    return None
