"""Erasure through the API, on both stores: forget an entity, erase a tenant.

After a forget, every path is asked for the entity's id and values — facts at many
as_of/known_at, history, entity, neighbors, episodes, search (fulltext and the stored
vectors), context, the ledger export, review candidates, metrics — and none answers them.
Each check is first made to succeed before the forget, so none can pass vacuously.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.client import AsyncSgamClient, SgamClient, SgamNotFound, SyncClient
from api.local import LocalClient
from api.server import running
from api.settings import Settings
from api.transfer import ExportKind
from api.transfer.exporter import export
from graph.embeddings import SentenceEmbedder, default_embedder
from graph.model import MemoryDelta
from graph.port import Store
from graph.queue import CandidateStatus, HoldReason, MergeCandidate, MergeStatus, PendingCandidate
from graph.retrieval.port import ItemKind, Window
from graph.stores.neo4j import store as neo4j_store_module
from graph.stores.sqlite import store as sqlite_store_module
from graph.stores.sqlite.store import SqliteStore
from tests.api.conftest import AppFactory
from tests.api.helpers import episode, fact, problem
from tests.conftest import ROOT

MIRA = "mira-7f3a"  # an id no other test data contains
EMAIL = "mira.q.secret@example.org"
OTHER_VALUE = "nebula-tier"  # mira's status value
T_FAR_PAST = "2025-01-01T00:00:00Z"
AS_OFS = [
    "2025-06-01T00:00:00Z",
    "2026-01-01T00:00:00Z",
    "2026-02-20T00:00:00Z",
    "2026-03-15T00:00:00Z",
    "2026-04-15T00:00:00Z",
    "2026-06-01T00:00:00Z",
    "2027-01-01T00:00:00Z",
]
SCHEMA = {
    "mode": "permissive",
    "predicates": [
        {"name": "owner", "object_type": "Entity", "cardinality": "one"},
        {"name": "tier", "value_type": "string"},
    ],
}


@pytest.fixture(scope="session")
def embedder() -> SentenceEmbedder:
    return default_embedder()


@pytest.fixture
def api(make_app: AppFactory) -> Iterator[TestClient]:
    with TestClient(make_app()) as c:
        yield c


def post(c: TestClient, path: str, body: Any, status: int = 201) -> Any:
    r = c.post(path, json=body)
    assert r.status_code == status, r.text
    return r.json()


def seed(c: TestClient, tenant: str) -> dict[str, str]:
    """Mira's memory, and what touches it: a corroboration, a retraction, a single-valued
    timeline she shared with someone else, and an interval her episode cut."""
    base = f"/v1/tenants/{tenant}"
    r = c.put(f"{base}/schema", json=SCHEMA)
    assert r.status_code == 200, r.text
    post(c, f"{base}/episodes", episode("e-other", "2026-01-15T00:00:00Z", content="acct tier"))
    post(
        c,
        f"{base}/facts",
        {
            "facts": [
                fact(
                    "acct-1",
                    "tier",
                    value="premium",
                    valid_from="2026-01-15T00:00:00Z",
                    source_episode_id="e-other",
                ),
                fact(
                    "bob",
                    "status",
                    value="platinum",
                    valid_from="2026-01-15T00:00:00Z",
                    source_episode_id="e-other",
                ),
            ]
        },
    )
    post(
        c,
        f"{base}/episodes",
        episode("e-mira", "2026-01-01T00:00:00Z", content=f"{MIRA} wrote from {EMAIL}"),
    )
    written = post(
        c,
        f"{base}/facts",
        {
            "facts": [
                fact(
                    MIRA,
                    "status",
                    value=OTHER_VALUE,
                    valid_from="2026-01-01T00:00:00Z",
                    source_episode_id="e-mira",
                    subject_type="Person",
                ),
                fact(
                    MIRA,
                    "email",
                    value=EMAIL,
                    valid_from="2026-01-01T00:00:00Z",
                    source_episode_id="e-mira",
                ),
                fact(
                    MIRA,
                    "advisor",
                    object="bob",
                    valid_from="2026-01-01T00:00:00Z",
                    source_episode_id="e-mira",
                ),
            ]
        },
    )
    status_id = written["facts"][0]["fact_id"]
    # A second source of the same status (corroboration), then a retraction of it.
    post(c, f"{base}/episodes", episode("e-again", "2026-02-15T00:00:00Z", content="again"))
    post(
        c,
        f"{base}/facts",
        {
            "facts": [
                fact(
                    MIRA,
                    "status",
                    value=OTHER_VALUE,
                    valid_from="2026-01-01T00:00:00Z",
                    source_episode_id="e-again",
                )
            ]
        },
    )
    r = c.post(f"{base}/facts/{status_id}/retract", json={"valid_to": "2026-05-01T00:00:00Z"})
    assert r.status_code == 200, r.text
    # Mira owned acct-1 from March (cutting nobody: it was new), zed from April; her
    # episode also cut the account's premium tier, which must come back whole.
    post(c, f"{base}/episodes", episode("e-acct", "2026-03-01T00:00:00Z", content="handover"))
    post(
        c,
        f"{base}/facts",
        {
            "facts": [
                fact(
                    "acct-1",
                    "owner",
                    object=MIRA,
                    valid_from="2026-03-01T00:00:00Z",
                    source_episode_id="e-acct",
                ),
                fact(
                    "acct-1",
                    "tier",
                    value="basic",
                    valid_from="2026-03-01T00:00:00Z",
                    valid_to="2026-04-01T00:00:00Z",
                    source_episode_id="e-acct",
                ),
            ]
        },
    )
    # Her ownership is retracted (a ledger entry of the shared timeline, of no episode).
    owned = c.get(
        f"{base}/facts",
        params={"subject": "acct-1", "predicate": "owner", "as_of": "2026-03-02T00:00:00Z"},
    ).json()["facts"]
    r = c.post(
        f"{base}/facts/{owned[0]['fact_id']}/retract", json={"valid_to": "2026-03-20T00:00:00Z"}
    )
    assert r.status_code == 200, r.text
    post(c, f"{base}/episodes", episode("e-zed", "2026-04-01T00:00:00Z", content="zed owns it"))
    post(
        c,
        f"{base}/facts",
        {
            "facts": [
                fact(
                    "acct-1",
                    "owner",
                    object="zed",
                    valid_from="2026-04-01T00:00:00Z",
                    source_episode_id="e-zed",
                )
            ]
        },
    )
    return {"status_id": status_id, "owned_id": owned[0]["fact_id"]}


def hold_candidates(store: Store, tenant: str) -> None:
    now = datetime.now(UTC)
    delta = MemoryDelta(
        subject=MIRA,
        predicate="nickname",
        value="mq",
        source_episode_id="e-other",
        valid_from=datetime(2026, 1, 15, tzinfo=UTC),
    )
    store.queue.hold_candidate(
        candidate=PendingCandidate(
            tenant_id=tenant,
            candidate_id="k-mira",
            episode_id="e-other",
            statement_key=f'["{MIRA}","nickname","=mq"]',
            reason=HoldReason.CONFIRMATION,
            delta=delta,
            status=CandidateStatus.PENDING,
            created_at=now,
        )
    )
    store.queue.add_merge_candidates(
        candidates=[
            MergeCandidate(
                tenant_id=tenant,
                candidate_id="m-mira",
                entity_id="mira-q",
                name="Mira Q",
                existing_entity_id=MIRA,
                entity_type="Person",
                similarity=0.93,
                episode_id="e-other",
                status=MergeStatus.OPEN,
                created_at=now,
            )
        ]
    )


def everything(c: TestClient, store: Store, tenant: str, known_at: str) -> str:
    """The text of every read path of the tenant, at several times. Paths that name mira
    in the request are read for their results only (a 404 echoes the id asked for)."""
    base = f"/v1/tenants/{tenant}"
    out: list[str] = []
    for as_of in AS_OFS:
        for k in (known_at, None):
            params = {"as_of": as_of, "limit": 1000} | ({"known_at": k} if k else {})
            out.append(c.get(f"{base}/facts", params=params).text)
    for subject, predicate in ((MIRA, "status"), (MIRA, "email"), ("acct-1", "owner")):
        for k in (known_at, None):
            params = {"subject": subject, "predicate": predicate} | ({"known_at": k} if k else {})
            out.append(str(c.get(f"{base}/facts/history", params=params).json().get("facts")))
    for path in (f"/entities/{MIRA}", f"/entities/{MIRA}/neighbors"):
        r = c.get(base + path)
        out.append(r.text if r.status_code == 200 else "")
    for path in (
        "/entities/bob/neighbors",
        "/entities/acct-1",
        "/entities/acct-1/neighbors",
        "/episodes/e-other",
        "/candidates",
        "/merge-candidates",
    ):
        out.append(c.get(base + path).text)
    for ep in ("e-mira", "e-again", "e-acct"):
        r = c.get(f"{base}/episodes/{ep}")
        out.append(r.text if r.status_code == 200 else "")
    for q in (MIRA, EMAIL, OTHER_VALUE, "mira wrote"):
        out.append(str(c.post(f"{base}/search", json={"query": q, "limit": 100}).json()["results"]))
        ctx = c.post(f"{base}/context", json={"question": q}).json()
        out.append(str([ctx["facts"], ctx["episodes"]]))
    ledger = io.StringIO()
    export(store, ledger, tenant_id=tenant, kind=ExportKind.LEDGER)
    out.append(ledger.getvalue())
    out.append(c.get("/metrics").text)
    return "\n".join(out)


def ledger_of(store: Store, tenant: str) -> str:
    out = io.StringIO()
    export(store, out, tenant_id=tenant, kind=ExportKind.LEDGER)
    return out.getvalue()


def vector_hits(store: Store, tenant: str, embedder: SentenceEmbedder) -> set[str]:
    """Item ids the stored vectors answer for queries about mira (any time, any kind)."""
    window = Window(as_of=datetime(2026, 3, 15, tzinfo=UTC), known_at=datetime.now(UTC))
    found: set[str] = set()
    for text in (f"{MIRA} status {OTHER_VALUE}", f"{MIRA} wrote from {EMAIL}", MIRA):
        vec = embedder.encode([text])[0]
        for kind in ItemKind:
            hits = store.search.vector_search(  # type: ignore[attr-defined]
                tenant_id=tenant,
                kind=kind,
                vector=vec,
                model=embedder.name,
                window=window,
                limit=100,
            )
            found |= {h.item_id for h in hits}
    return found


def test_forget_erases_the_entity_from_every_path(
    api: TestClient, store: Store, tenant: str, other_tenant: str, embedder: SentenceEmbedder
) -> None:
    ids = seed(api, tenant)
    seed(api, other_tenant)  # the same names in another tenant: untouched throughout
    hold_candidates(store, tenant)
    store.search.index_pending(tenant_id=tenant, embedder=embedder)  # type: ignore[attr-defined]
    known_before = datetime.now(UTC).isoformat().replace("+00:00", "Z")

    seen = everything(api, store, tenant, known_before)
    for needle in (MIRA, EMAIL, OTHER_VALUE, ids["status_id"], ids["owned_id"], "e-mira"):
        assert needle in seen, needle  # every probe can see it before
    assert {MIRA, "e-mira", ids["status_id"]} <= vector_hits(store, tenant, embedder)
    other_before = ledger_of(store, other_tenant)
    assert MIRA in other_before

    base = f"/v1/tenants/{tenant}"
    ledger_before = ledger_of(store, tenant)
    preview = post(api, f"{base}/entities/{MIRA}/forget", {"dry_run": True}, status=200)
    assert ledger_of(store, tenant) == ledger_before  # the dry run wrote nothing
    done = post(api, f"{base}/entities/{MIRA}/forget", {}, status=200)
    assert preview == {**done, "dry_run": True}
    # Episodes e-mira, e-again (corroboration) and e-acct (her ownership); facts: status,
    # email, advisor (+ its corroborated version), ownership, the basic tier of e-acct.
    assert done["entity_id"] == MIRA
    assert done["entities"] == 1
    assert done["episodes"] == 3
    assert done["candidates"] == 2
    assert done["facts"] >= 5
    assert done["versions"] >= done["facts"]
    # 3 asserts + corroboration + retraction + ownership + its retraction + basic tier
    assert done["assertions"] >= 8

    after = everything(api, store, tenant, known_before)
    for needle in (MIRA, EMAIL, OTHER_VALUE, ids["status_id"], "e-mira", "e-again", "e-acct"):
        assert needle not in after, needle
    # Not even the retraction of her ownership, on the timeline she shared with zed.
    assert ids["owned_id"] not in after
    assert vector_hits(store, tenant, embedder) & {MIRA, "e-mira", ids["status_id"]} == set()
    problem(api.get(f"{base}/entities/{MIRA}"), 404)
    problem(api.get(f"{base}/episodes/e-mira"), 404)

    # The intervals her episode cut are repaired; the other owner stays.
    tier = api.get(
        f"{base}/facts",
        params={"subject": "acct-1", "predicate": "tier", "as_of": "2026-03-15T00:00:00Z"},
    ).json()["facts"]
    assert [(f["value"], f["valid_from"], f["valid_to"]) for f in tier] == [
        ("premium", "2026-01-15T00:00:00Z", None)
    ]
    owner = api.get(
        f"{base}/facts",
        params={"subject": "acct-1", "predicate": "owner", "as_of": "2026-06-01T00:00:00Z"},
    ).json()["facts"]
    assert [(f["object"], f["valid_from"]) for f in owner] == [("zed", "2026-04-01T00:00:00Z")]
    bob = api.get(f"{base}/facts", params={"subject": "bob", "predicate": "status"}).json()
    assert [f["value"] for f in bob["facts"]] == ["platinum"]

    # Another tenant's mira is untouched: its whole ledger is as it was.
    assert ledger_of(store, other_tenant) == other_before
    # And forgetting again is a 404 with a problem body, not a 500.
    problem(api.post(f"{base}/entities/{MIRA}/forget", json={}), 404)


def test_forget_refuses_bad_input_and_foreign_keys(
    make_app: AppFactory, tenant: str, other_tenant: str
) -> None:
    keys = f"{tenant}:k-own,{other_tenant}:k-other,*:k-root"
    with TestClient(make_app(api_keys=keys)) as c:
        base = f"/v1/tenants/{tenant}"
        own = {"Authorization": "Bearer k-own"}
        r = c.post(f"{base}/episodes", json=episode("e1"), headers=own)
        assert r.status_code == 201, r.text
        r = c.post(f"{base}/facts", json={"facts": [fact(MIRA, "status", value="x")]}, headers=own)
        assert r.status_code == 201, r.text
        foreign = {"Authorization": "Bearer k-other"}
        problem(c.post(f"{base}/entities/{MIRA}/forget", json={}, headers=foreign), 404)
        problem(
            c.post(f"{base}/entities/{MIRA}/forget", json={"dry_run": "maybe"}, headers=own), 422
        )
        problem(c.post(f"{base}/entities/{MIRA}/forget", json={"drop": True}, headers=own), 422)
        problem(c.post(f"{base}/entities/nobody/forget", json={}, headers=own), 404)
        r = c.get(f"{base}/entities/{MIRA}", headers=own)
        assert r.status_code == 200, r.text  # nothing of the refused requests went through
        # A tenant's own key may not erase the tenant; a foreign key does not see it.
        problem(c.delete(base, headers=own), 403)
        problem(c.delete(base, headers=foreign), 404)
        assert c.get(f"{base}/entities/{MIRA}", headers=own).status_code == 200
        r = c.delete(base, headers={"Authorization": "Bearer k-root"})
        assert r.status_code == 200, r.text
        assert r.json() == {"tenant_id": tenant, "erased": True}
        problem(c.get(f"{base}/entities/{MIRA}", headers=own), 404)
        problem(c.delete("/v1/tenants/Bad Tenant", headers={"Authorization": "Bearer k-root"}), 404)


def tenant_rows(store: Store, tenant: str) -> int:
    """Everything stored under the tenant id, counted at the storage level."""
    if isinstance(store, SqliteStore):  # SQLite: every table
        tables = [
            r[0] for r in store.conn.read("SELECT name FROM sqlite_master WHERE type = 'table'")
        ]
        n = 0
        for t in tables:
            cols = [r[1] for r in store.conn.read(f"PRAGMA table_info({t})")]
            if "tenant_id" in cols:
                n += store.conn.read(f"SELECT count(*) FROM {t} WHERE tenant_id = ?", (tenant,))[0][
                    0
                ]
        return int(n)
    driver = store.conn.driver  # type: ignore[attr-defined]
    nodes = driver.execute_query("MATCH (n {tenant_id: $t}) RETURN count(n) AS n", {"t": tenant})
    rels = driver.execute_query(
        "MATCH ()-[r {tenant_id: $t}]->() RETURN count(r) AS n", {"t": tenant}
    )
    return int(nodes.records[0]["n"]) + int(rels.records[0]["n"])


def seed_two_tenants(
    api: TestClient, store: Store, tenant: str, other_tenant: str, embedder: SentenceEmbedder
) -> str:
    """Both tenants seeded, the first with held candidates and stored vectors too; the
    other tenant's ledger export as it stands."""
    seed(api, tenant)
    seed(api, other_tenant)
    hold_candidates(store, tenant)
    store.search.index_pending(tenant_id=tenant, embedder=embedder)  # type: ignore[attr-defined]
    assert tenant_rows(store, tenant) > 20
    return ledger_of(store, other_tenant)


def test_deleting_a_tenant_erases_it_on_the_store_and_leaves_others(
    api: TestClient, store: Store, tenant: str, other_tenant: str, embedder: SentenceEmbedder
) -> None:
    other = seed_two_tenants(api, store, tenant, other_tenant, embedder)
    r = api.delete(f"/v1/tenants/{tenant}")  # an open server: the caller is the admin
    assert r.status_code == 200, r.text
    assert tenant_rows(store, tenant) == 0
    assert vector_hits(store, tenant, embedder) == set()
    assert ledger_of(store, other_tenant) == other  # (its vectors may grow: the indexer runs)
    assert MIRA in other
    ledger = io.StringIO()
    assert export(store, ledger, tenant_id=tenant, kind=ExportKind.LEDGER) == 0
    r = api.get(f"/v1/tenants/{tenant}/schema")
    assert r.json()["version"] == 0  # back to the permissive default


def test_a_tenant_is_deleted_batch_by_batch_to_the_last_row(
    api: TestClient,
    store: Store,
    tenant: str,
    other_tenant: str,
    embedder: SentenceEmbedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Both stores delete a tenant in bounded transactions (on SQLite every tenant's
    writes wait for the one writer lock). With batches of 3 rows the seeded tables take
    several each, and nothing of the tenant is left, nothing of the other goes."""
    monkeypatch.setattr(sqlite_store_module, "PURGE_BATCH", 3)
    monkeypatch.setattr(neo4j_store_module, "PURGE_BATCH", 3)
    other = seed_two_tenants(api, store, tenant, other_tenant, embedder)
    store.purge_tenant(tenant_id=tenant)
    assert tenant_rows(store, tenant) == 0
    assert ledger_of(store, other_tenant) == other
    store.purge_tenant(tenant_id=tenant)  # again: nothing to do, no error
    assert tenant_rows(store, tenant) == 0


def test_the_server_purges_by_retention_on_its_own(make_app: AppFactory, tenant: str) -> None:
    """SGAM_PURGE_INTERVAL_SECONDS: the server's purger applies a P30D retention to a
    fact that ended years ago (the wall clock), and keeps the open one."""
    with TestClient(make_app(purge_interval_seconds=1)) as c:
        base = f"/v1/tenants/{tenant}"
        schema = {"predicates": [{"name": "note", "value_type": "string", "retention": "P30D"}]}
        assert c.put(f"{base}/schema", json=schema).status_code == 200
        post(c, f"{base}/episodes", episode("e1", "2020-01-01T00:00:00Z"))
        post(
            c,
            f"{base}/facts",
            {
                "facts": [
                    fact(
                        "mira",
                        "note",
                        value="old",
                        valid_from="2020-01-01T00:00:00Z",
                        valid_to="2020-02-01T00:00:00Z",
                    ),
                    fact("ann", "note", value="open", valid_from="2020-01-01T00:00:00Z"),
                ]
            },
        )

        def notes() -> list[str]:
            r = c.get(
                f"{base}/facts", params={"predicate": "note", "as_of": "2020-01-15T00:00:00Z"}
            )
            return sorted(f["value"] for f in r.json()["facts"])

        assert notes() == ["old", "open"]
        deadline = time.monotonic() + 60
        while notes() != ["open"] and time.monotonic() < deadline:
            time.sleep(0.2)
        assert notes() == ["open"]


def test_retention_in_the_schema_is_checked(api: TestClient, tenant: str) -> None:
    base = f"/v1/tenants/{tenant}"
    example = json.loads(
        re.search(
            r"<!-- example: retention -->\s*```json\n(.*?)```",
            (ROOT / "docs" / "schema.md").read_text(encoding="utf-8"),
            re.DOTALL,
        ).group(1)  # type: ignore[union-attr]
    )
    r = api.put(f"{base}/schema", json=example)
    assert r.status_code == 200, r.text
    assert r.json()["episode_retention"] == "P2Y"
    assert [p["retention"] for p in r.json()["predicates"]] == ["P30D", "keep"]
    for bad, field in (
        ({"predicates": [{"name": "n", "value_type": "string", "retention": "P30X"}]}, "retention"),
        ({"predicates": [{"name": "n", "value_type": "string", "retention": "P0D"}]}, "retention"),
        (
            {"predicates": [{"name": "n", "value_type": "string", "retention": "P1234567D"}]},
            "retention",
        ),
        ({"episode_retention": "PT"}, "episode_retention"),
        ({"episode_retention": "P" + "1" * 70}, "episode_retention"),
    ):
        body = problem(api.put(f"{base}/schema", json=bad), 422)
        assert any(field in str(e.get("field", "")) for e in body["errors"]), body
    # Labels of one's own stay accepted (kept like keep).
    ok = {"predicates": [{"name": "n", "value_type": "string", "retention": "seven_years"}]}
    assert api.put(f"{base}/schema", json=ok).status_code == 200
    assert api.get(f"{base}/schema").json()["predicates"][0]["retention"] == "seven_years"


def test_the_clients_forget_and_erase(store: Store, tenant: str, other_tenant: str) -> None:
    """Both operations on the blocking client over HTTP, the async one, and in-process."""
    source = {"source_episode_id": "e1"}
    ep = {"episode_id": "e1", "content": "x", "occurred_at": "2026-06-01T09:00:00Z"}

    def seed_with(client: SyncClient, t: str) -> None:
        client.create_episode(t, ep)
        client.write_facts(t, [{"subject": MIRA, "predicate": "city", "value": "Lyon", **source}])

    with running(Settings(port=0, log_level="warning", workers=0), store=store) as url:
        with SgamClient(url) as http:
            seed_with(http, tenant)
            preview = http.forget_entity(tenant, MIRA, dry_run=True)
            assert (preview.dry_run, preview.facts, preview.episodes) == (True, 1, 1)
            assert http.forget_entity(tenant, MIRA).model_dump() == {
                **preview.model_dump(),
                "dry_run": False,
            }
            with pytest.raises(SgamNotFound):
                http.forget_entity(tenant, MIRA)
            seed_with(http, other_tenant)

        async def run() -> None:
            async with AsyncSgamClient(url) as sgam:
                gone = await sgam.delete_tenant(other_tenant)
                assert (gone.tenant_id, gone.erased) == (other_tenant, True)
                assert (await sgam.facts(other_tenant)).facts == []

        asyncio.run(run())
    with LocalClient(store, settings=Settings(workers=0)) as local:
        seed_with(local, tenant)
        assert local.forget_entity(tenant, MIRA).versions == 1
        assert local.delete_tenant(tenant).erased is True
        assert local.facts(tenant).facts == []
