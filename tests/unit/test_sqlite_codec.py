"""The SQLite codec's fast paths read exactly what the JSON parser reads, and a fact row is
read by position in the facts table's own column order."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from graph.stores.codec import load_value
from graph.stores.sqlite.codec import FACT_COLUMNS, id_list
from graph.stores.sqlite.store import SqliteStore
from graph.timeutil import from_db, to_db

# Text with the characters that JSON escapes: quotes, backslashes, controls, non-ASCII.
TEXT = st.text(alphabet=st.sampled_from(['"', "\\", "\n", "\x01", "é", "💡", "a", "-", " "]))


@given(st.lists(st.one_of(TEXT, st.text()), max_size=4))
def test_id_lists_read_as_json_reads_them(ids: list[str]) -> None:
    text = json.dumps(ids)
    assert id_list(text) == json.loads(text) == ids


@given(
    st.one_of(TEXT, st.text(), st.integers(), st.floats(allow_nan=False), st.booleans(), st.none())
)
def test_values_read_as_json_reads_them(value: object) -> None:
    text = json.dumps(value)
    assert load_value(text) == json.loads(text)
    assert type(load_value(text)) is type(json.loads(text))


def test_fast_paths_leave_odd_texts_to_the_parser() -> None:
    assert id_list('["a", "b"]') == ["a", "b"]
    assert id_list('["a\\"b"]') == ['a"b']
    assert load_value('"a\\u00e9"') == "aé"
    assert load_value('""') == ""
    assert load_value("null") is None


@given(st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2200, 1, 1)))
def test_stored_times_read_back_as_the_same_utc_instant(naive: datetime) -> None:
    at = naive.replace(tzinfo=UTC)
    back = from_db(to_db(at))
    assert back == at
    assert back.utcoffset() == timedelta(0)
    # Text with an offset (what other writers may hold) is converted to UTC.
    shifted = from_db(at.astimezone(UTC).isoformat().replace("+00:00", "+02:00"))
    assert shifted == at - timedelta(hours=2)


def test_fact_columns_are_the_facts_table_in_its_order(sqlite_store: SqliteStore) -> None:
    # fact_from_row reads by position: SELECT * and SELECT FACT_COLUMNS must agree.
    rows = sqlite_store.conn.read("SELECT name FROM pragma_table_info('facts') ORDER BY cid")
    assert [r["name"] for r in rows] == [c.strip() for c in FACT_COLUMNS.split(",")]
