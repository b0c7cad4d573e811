"""Instants: always timezone-aware, normalised to UTC, microsecond resolution."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

from graph.errors import invalid

EPSILON = timedelta(microseconds=1)


def parse_instant(text: str, *, field: str, index: int | None = None) -> datetime:
    """RFC 3339 with an explicit offset; a naive timestamp is refused, never guessed."""
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except (ValueError, AttributeError):
        raise invalid(f"not an RFC 3339 timestamp: {text!r}", field=field, index=index) from None
    return ensure_aware(value, field=field, index=index)


def ensure_aware(value: datetime, *, field: str, index: int | None = None) -> datetime:
    if value.tzinfo is None or value.utcoffset() is None:
        raise invalid(
            f"timestamp {value.isoformat()} has no UTC offset; add one such as 'Z'",
            field=field,
            index=index,
        )
    try:
        return value.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00:00+01:00 is before year 1 in UTC
        raise invalid(
            f"timestamp {value.isoformat()} is out of range: it has no UTC form"
            " within years 1 to 9999",
            field=field,
            index=index,
        ) from None


def to_db(value: datetime) -> str:
    """Fixed-width UTC text so that SQLite's string order is time order."""
    v = value.astimezone(UTC)
    return (
        f"{v.year:04d}-{v.month:02d}-{v.day:02d}T"
        f"{v.hour:02d}:{v.minute:02d}:{v.second:02d}.{v.microsecond:06d}Z"
    )


def from_db(text: str) -> datetime:
    if text.endswith("Z"):  # to_db's form: Python 3.11 reads the Z as UTC itself
        return datetime.fromisoformat(text)
    return datetime.fromisoformat(text).astimezone(UTC)


def format_instant(value: datetime) -> str:
    """RFC 3339 in UTC, microseconds only when present."""
    v = value.astimezone(UTC)
    spec = "microseconds" if v.microsecond else "seconds"
    return v.replace(tzinfo=None).isoformat(timespec=spec) + "Z"


class Clock:
    """Wall clock that never repeats or goes back within a process.

    System time orders versions; two transactions stamped with the same instant would make
    ``known_at`` ambiguous, so each reading is at least one microsecond after the last.
    """

    def __init__(self) -> None:
        self._last = datetime.min.replace(tzinfo=UTC)
        self._lock = threading.Lock()

    def now(self, *, after: datetime | None = None) -> datetime:
        with self._lock:
            t = datetime.now(UTC)
            floor = self._last if after is None or after < self._last else after
            if t <= floor:
                t = floor + EPSILON
            self._last = t
            return t


CLOCK = Clock()


def utcnow() -> datetime:
    return CLOCK.now()
