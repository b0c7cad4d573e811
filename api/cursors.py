"""Opaque keyset cursors for every paged list of the API.

A cursor says where a page ended and which read it belongs to: the tenant and the list
it was issued for (another tenant's cursor, or one of another list, is a 422, not a page
of a read it does not belong to), filters that stay the same, and ``as_of``/``known_at``
pinned, so every page answers the same question even while writes go on. Lists never
stop silently: a page that is not the last carries ``next_cursor``.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from datetime import datetime

from graph.errors import SgamError, invalid
from graph.model import instant_problem
from graph.timeutil import format_instant, parse_instant, utcnow

MAX_AFTER_PARTS = 4
NOT_A_CURSOR = "not a cursor returned by this API"
# Says neither which tenant nor which list the cursor was issued for.
NOT_FOR_THIS = "not valid for this request: it was issued for another tenant or list"


@dataclass(frozen=True)
class Cursor:
    after: tuple[str, ...]  # the keyset position of the last row of the page ("" parts ok)
    as_of: datetime | None  # None: a read at any valid time
    known_at: datetime
    filters: dict[str, str | None]  # the list's filters
    # What it was issued for: the tenant and the list ("facts", "history", ...). None only
    # in a cursor of no such read (one issued before cursors carried them, or forged).
    tenant: str | None = None
    kind: str | None = None

    def encode(self) -> str:
        payload = {
            "v": 1,
            "tenant": self.tenant,
            "list": self.kind,
            "after": list(self.after),
            "as_of": None if self.as_of is None else format_instant(self.as_of),
            "known_at": format_instant(self.known_at),
            "filters": self.filters,
        }
        raw = json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def decode(cls, text: str) -> Cursor:
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
            data = json.loads(raw)
            after = data["after"]
            filters = data["filters"]
            as_of = data["as_of"]
            tenant = data.get("tenant")
            kind = data.get("list")
            ok = (
                data.get("v") == 1
                and isinstance(after, list)
                and len(after) <= MAX_AFTER_PARTS
                and all(isinstance(p, str) for p in after)
                and isinstance(filters, dict)
                and all(isinstance(v, str | None) for v in filters.values())
                and isinstance(as_of, str | None)
                and isinstance(tenant, str | None)
                and isinstance(kind, str | None)
            )
            if not ok:
                raise ValueError("unexpected cursor shape")
            # Its strings go to the store as query parameters: Unicode text only (a
            # forged "\ud800" cannot be encoded: a 500 at the driver).
            json.dumps(data, ensure_ascii=False).encode("utf-8")
            return cls(
                after=tuple(after),
                as_of=None if as_of is None else _instant(as_of),
                known_at=_instant(data["known_at"]),
                filters={str(k): v for k, v in filters.items()},
                tenant=tenant,
                kind=kind,
            )
        except (
            SgamError,
            ValueError,  # UnicodeError and JSONDecodeError included
            KeyError,
            TypeError,
            RecursionError,  # JSON nested past the parser's stack
            binascii.Error,
        ):
            raise invalid(NOT_A_CURSOR, field="cursor") from None


def _instant(value: object) -> datetime:
    """A time pinned by a cursor: RFC 3339 with an offset, within the stores' range."""
    if not isinstance(value, str):
        raise TypeError("a cursor's time is a string")
    instant = parse_instant(value, field="cursor")
    if instant_problem(instant) is not None:
        raise ValueError("a cursor's time is out of range")
    return instant


@dataclass(frozen=True)
class Position:
    """Where a read starts: after this keyset position (None: from the start), at these
    times (pinned by the cursor, or the request's, or now)."""

    after: tuple[str, ...] | None
    as_of: datetime | None
    known_at: datetime


def resume(
    cursor: str | None,
    *,
    tenant: str,
    kind: str,
    filters: dict[str, str | None],
    as_of: datetime | None,
    known_at: datetime | None,
    parts: int,
    pin_as_of: bool = True,
) -> Position:
    """The position a request asks for; a cursor must belong to this very read: issued
    for ``tenant``'s list ``kind``, with these filters and pins.

    ``pin_as_of`` is False for reads at any valid time (no ``as_of`` at all).
    """
    now = utcnow()
    if cursor is None:
        return Position(
            after=None,
            as_of=(as_of or now) if pin_as_of else None,
            known_at=known_at or now,
        )
    c = Cursor.decode(cursor)
    if c.tenant is None or c.kind is None:  # every cursor this API issues names both
        raise invalid(NOT_A_CURSOR, field="cursor")
    if (c.tenant, c.kind) != (tenant, kind):
        raise invalid(NOT_FOR_THIS, field="cursor")
    if c.filters != filters:
        raise invalid("the cursor belongs to a read with other filters", field="cursor")
    if (c.as_of is not None) != pin_as_of:  # a read at one valid time, or at any
        raise invalid(NOT_A_CURSOR, field="cursor")
    if len(c.after) not in (0, parts):
        raise invalid(NOT_A_CURSOR, field="cursor")
    for name, given, pinned in (("as_of", as_of, c.as_of), ("known_at", known_at, c.known_at)):
        if given is not None and given != pinned:
            shown = "none" if pinned is None else format_instant(pinned)
            raise invalid(f"the cursor is pinned to {name}={shown}", field=name)
    return Position(after=c.after or None, as_of=c.as_of, known_at=c.known_at)


def next_cursor(
    after: tuple[str, ...],
    *,
    position: Position,
    tenant: str,
    kind: str,
    filters: dict[str, str | None],
) -> str:
    return Cursor(
        after=after,
        as_of=position.as_of,
        known_at=position.known_at,
        filters=filters,
        tenant=tenant,
        kind=kind,
    ).encode()
