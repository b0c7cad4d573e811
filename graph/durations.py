"""Retention durations: ``keep``, a label of your own (kept like ``keep``), or an ISO-8601
duration of whole units (``P30D``, ``P1Y6M``, ``PT12H``), each number at most 6 digits.

No imports from the rest of ``graph``: the schema validates retentions with it.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

KEEP = "keep"
# Integers only, each at most 6 digits: P30D, P1Y6M, PT12H, P2W.
_DURATION = re.compile(
    r"P(?:(?P<years>\d{1,6})Y)?(?:(?P<months>\d{1,6})M)?(?:(?P<weeks>\d{1,6})W)?"
    r"(?:(?P<days>\d{1,6})D)?(?:T(?=\d)(?:(?P<hours>\d{1,6})H)?(?:(?P<minutes>\d{1,6})M)?"
    r"(?:(?P<seconds>\d{1,6})S)?)?"
)
_EARLIEST = datetime.min.replace(tzinfo=UTC)


@dataclass(frozen=True)
class Duration:
    years: int = 0
    months: int = 0
    weeks: int = 0
    days: int = 0
    hours: int = 0
    minutes: int = 0
    seconds: int = 0

    def before(self, now: datetime) -> datetime:
        """``now`` minus this duration (calendar years and months; a day past a short
        month's end is its last day); the earliest instant if that is before year 1."""
        total = now.year * 12 + now.month - 1 - (self.years * 12 + self.months)
        year, month = divmod(total, 12)
        if year < 1:
            return _EARLIEST
        day = min(now.day, calendar.monthrange(year, month + 1)[1])
        shifted = now.replace(year=year, month=month + 1, day=day)
        rest = timedelta(
            weeks=self.weeks,
            days=self.days,
            hours=self.hours,
            minutes=self.minutes,
            seconds=self.seconds,
        )
        try:
            return shifted - rest
        except OverflowError:
            return _EARLIEST


def parse_duration(text: str) -> Duration:
    """An ISO-8601 duration of whole units; ValueError naming the problem otherwise."""
    m = _DURATION.fullmatch(text)
    if m is None or text in ("P", "PT"):
        raise ValueError(
            f"retention {text!r} is not an ISO-8601 duration of whole units such as P30D,"
            " P1Y6M or PT12H (each number at most 6 digits)"
        )
    d = Duration(**{k: int(v) for k, v in m.groupdict().items() if v is not None})
    if d == Duration():
        raise ValueError(f"retention {text!r} is zero; use a positive duration or keep")
    return d


def retention_duration(text: str) -> Duration | None:
    """The duration of a retention, None when it keeps (``keep`` or a label); a value that
    starts with ``P`` is a duration and must parse."""
    if text.startswith("P"):
        return parse_duration(text)
    return None


def check_retention(text: str) -> str:
    """A pydantic validator: refuse a malformed duration, keep the text."""
    retention_duration(text)
    return text


__all__ = ["KEEP", "Duration", "check_retention", "parse_duration", "retention_duration"]
