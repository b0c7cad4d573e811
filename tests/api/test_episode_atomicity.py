"""Review M2: an episode and the facts it carries are written in one transaction.

The faults are injected at the storage port (the ledger's ``insert`` primitive) of the
real store — SQLite and Neo4j — so the transaction that fails is a real one: a crash
(an error no layer knows) or an outage (the store stops answering, the clean-up too).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.settings import Settings
from graph.errors import StoreUnavailableError
from graph.port import LedgerTx, Store
from tests.api.helpers import episode, problem


class _Crash(RuntimeError):
    """A failure nobody maps: what a bug or a dying process looks like to the route."""


class _FaultyTx:
    def __init__(self, inner: LedgerTx, fault: BaseException) -> None:
        self._inner = inner
        self._fault = fault

    def insert(self, **kwargs: Any) -> None:
        raise self._fault

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _FaultyStore:
    """The real store; while ``fault`` is set, writing fact versions raises it and, for an
    outage, every other write (the route's clean-up) fails as well."""

    def __init__(self, inner: Store) -> None:
        self._inner = inner
        self.fault: BaseException | None = None

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        if isinstance(self.fault, StoreUnavailableError) and self.outage_started:
            raise self.fault
        with self._inner.transaction() as tx:
            if self.fault is None:
                yield tx
            else:
                self.outage_started = True
                yield _FaultyTx(tx, self.fault)

    outage_started = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


FACTS = [
    {"subject": "mira", "predicate": "city", "value": "Lyon"},
    {"subject": "mira", "predicate": "age", "value": 41},
]


@pytest.mark.parametrize(
    "fault", [_Crash("boom"), StoreUnavailableError("Neo4j went away")], ids=["crash", "outage"]
)
def test_failing_inline_facts_leave_no_episode_and_the_retry_writes_them(
    store: Store, tenant: str, fault: BaseException
) -> None:
    faulty = _FaultyStore(store)
    app = create_app(Settings(workers=0), store=faulty)  # type: ignore[arg-type]
    base = f"/v1/tenants/{tenant}"
    body = episode("e1", facts=FACTS)
    with TestClient(app, raise_server_exceptions=False) as client:
        faulty.fault = fault
        r = client.post(f"{base}/episodes", json=body)
        assert r.status_code == (500 if isinstance(fault, _Crash) else 503), r.text
        faulty.fault = None
        faulty.outage_started = False
        # Nothing of the failed request is there: no episode, no fact.
        problem(client.get(f"{base}/episodes/e1"), 404)
        assert client.get(f"{base}/facts", params={"subject": "mira"}).json()["facts"] == []
        # The client retries the same request: everything is written.
        again = client.post(f"{base}/episodes", json=body)
        assert again.status_code == 201, again.text
        assert again.json()["created"] is True
        stored = client.get(f"{base}/facts", params={"subject": "mira"}).json()["facts"]
        assert sorted((f["predicate"], f["value"]) for f in stored) == [
            ("age", 41),
            ("city", "Lyon"),
        ]
        assert {f["source_episode_id"] for f in stored} == {"e1"}


def test_a_redelivery_with_facts_writes_those_missing_and_repeats_nothing(
    store: Store, tenant: str
) -> None:
    """created:false never drops facts silently: an episode stored without its facts (by
    an earlier version, or sent first without them) gets them on redelivery; facts
    already there stay unchanged."""
    app = create_app(Settings(workers=0), store=store)
    base = f"/v1/tenants/{tenant}"
    with TestClient(app) as client:
        assert client.post(f"{base}/episodes", json=episode("e1")).status_code == 201
        again = client.post(f"{base}/episodes", json=episode("e1", facts=FACTS[:1]))
        assert again.status_code == 200
        assert again.json()["created"] is False
        assert [f["value"] for f in again.json()["facts"]] == ["Lyon"]
        third = client.post(f"{base}/episodes", json=episode("e1", facts=FACTS))
        assert sorted(str(f["value"]) for f in third.json()["facts"]) == ["41", "Lyon"]
        history = client.get(
            f"{base}/facts/history", params={"subject": "mira", "predicate": "city"}
        )
        assert history.status_code == 200, history.text
        versions = history.json()["facts"]
        assert [(v["value"], v["sources"]) for v in versions] == [("Lyon", ["e1"])]
