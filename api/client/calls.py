"""Request building and response parsing, written once for both clients.

Every operation of REST API v1 is a function here that returns a :class:`Call`: the
method, path, query and body to send, and the parser of the answer (which raises the
:mod:`~api.client.errors` tree for a problem). The sync and async clients bind these same
functions as their methods (:class:`~api.client.operations.Operations`), so the two differ
only in how a call goes over the wire. Answers are parsed with the server's own models.

Bodies may be models or plain mappings; mappings are sent as they are, so the server is
the one that validates (a client may put an invalid write on the wire on purpose).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypedDict, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel

from api.client.errors import raise_for_problem
from api.routes.extraction import CandidateConfirmed, CandidatesPublic, MergeCandidatesPublic
from api.routes.search import ContextResponse, Scope, SearchResponse
from api.routes.tenants import TenantErased
from api.schemas import (
    EntityPredicates,
    EntityPublic,
    EpisodePublic,
    EpisodeWritten,
    FactHistory,
    FactsPublic,
    Health,
    Ready,
)
from graph.erasure import ForgetResult
from graph.model import (
    ConflictPolicy,
    DeleteResult,
    Direction,
    Episode,
    EpisodeCreate,
    Fact,
    MemoryDelta,
    Neighborhood,
    WriteResult,
)
from graph.queue import CandidateStatus, MergeCandidate, MergeStatus, PendingCandidate
from graph.retrieval import SearchFilters
from graph.schema import MemorySchema
from graph.timeutil import format_instant

DEFAULT_TIMEOUT = 30.0

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
Body = BaseModel | Mapping[str, Any]
Params = tuple[tuple[str, str], ...]


TransportT = TypeVar("TransportT")
HttpT = TypeVar("HttpT")


class HttpShell(Generic[TransportT, HttpT]):
    """How both HTTP clients are built: base URL, API key, timeout, and an optional httpx
    transport (tests call an app in-process through one). Each client names its httpx
    client class in ``_http_factory``."""

    _http_factory: Callable[..., HttpT]

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        transport: TransportT | None = None,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
    ) -> None:
        headers = {"Accept": "application/json, application/problem+json"}
        if api_key is not None:
            headers["Authorization"] = f"Bearer {api_key}"
        self._http = self._http_factory(
            base_url=base_url.rstrip("/"), headers=headers, timeout=timeout, transport=transport
        )


class FactFilters(TypedDict, total=False):
    """The filters and times of a state read (``GET /facts`` without paging)."""

    subject: str | None
    predicate: str | None
    object: str | None
    memory_type: str | None
    as_of: datetime | None
    known_at: datetime | None


@dataclass(frozen=True)
class Call(Generic[T]):
    """One operation: the HTTP request that carries it and how to read its answer, and
    (set when a client method builds it) the operation's name and the arguments given.

    The HTTP clients send the request; :class:`api.local.LocalClient` runs the operation
    in-process from its name and arguments instead.
    """

    method: str
    path: str
    parse: Callable[[httpx.Response], T]
    params: Params = ()
    json: Any = None
    operation: str = ""
    arguments: Mapping[str, Any] = field(default_factory=dict)


def _model(model: type[M]) -> Callable[[httpx.Response], M]:
    def parse(response: httpx.Response) -> M:
        raise_for_problem(response)
        return model.model_validate_json(response.content)

    return parse


def _text(response: httpx.Response) -> str:
    raise_for_problem(response)
    return response.text


def _seg(value: str) -> str:
    return quote(value, safe="")


def _tenant(tenant: str, rest: str = "") -> str:
    return f"/v1/tenants/{_seg(tenant)}{rest}"


def _body(value: Body) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    return dict(value)


def _instant(value: datetime) -> str:
    """RFC 3339 in UTC; a naive datetime goes as it is, for the service to refuse (it never
    guesses an offset, and neither does the client)."""
    if value.tzinfo is None or value.utcoffset() is None:
        return value.isoformat()
    return format_instant(value)


def _json(**values: Any) -> dict[str, Any]:
    """A JSON body of the given members; None members are left out (server defaults)."""
    out: dict[str, Any] = {}
    for name, v in values.items():
        if v is None:
            continue
        if isinstance(v, datetime):
            v = _instant(v)
        elif isinstance(v, BaseModel):
            v = v.model_dump(mode="json", exclude_none=True)
        out[name] = v
    return out


def _params(**values: str | int | datetime | Sequence[str] | None) -> Params:
    out: list[tuple[str, str]] = []
    for name, v in values.items():
        if v is None:
            continue
        if isinstance(v, datetime):
            out.append((name, _instant(v)))
        elif isinstance(v, str | int):
            out.append((name, str(v)))
        else:
            out.extend((name, item) for item in v)
    return tuple(out)


# -- episodes --------------------------------------------------------------------------
def create_episode(tenant: str, episode: EpisodeCreate | Mapping[str, Any]) -> Call[EpisodeWritten]:
    """Store an episode (and the deltas it carries); ``created`` is false on redelivery."""
    return Call("POST", _tenant(tenant, "/episodes"), _model(EpisodeWritten), json=_body(episode))


def get_episode(tenant: str, episode_id: str) -> Call[EpisodePublic]:
    """An episode, its extraction status and the facts it sourced."""
    return Call("GET", _tenant(tenant, f"/episodes/{_seg(episode_id)}"), _model(EpisodePublic))


def delete_episode(tenant: str, episode_id: str) -> Call[DeleteResult]:
    """Delete an episode and what only it asserted; the intervals it cut are repaired."""
    return Call("DELETE", _tenant(tenant, f"/episodes/{_seg(episode_id)}"), _model(DeleteResult))


def retry_episode(tenant: str, episode_id: str) -> Call[Episode]:
    """Queue an episode for extraction again (a failed one, typically)."""
    path = _tenant(tenant, f"/episodes/{_seg(episode_id)}/retry")
    return Call("POST", path, _model(Episode))


# -- facts -----------------------------------------------------------------------------
def write_facts(
    tenant: str,
    facts: Sequence[MemoryDelta | Mapping[str, Any]],
    *,
    conflict_policy: ConflictPolicy = ConflictPolicy.REJECT,
) -> Call[WriteResult]:
    """Write a batch of facts in one transaction: all of them or none."""
    body = {"facts": [_body(f) for f in facts], "conflict_policy": conflict_policy.value}
    return Call("POST", _tenant(tenant, "/facts"), _model(WriteResult), json=body)


def retract_fact(tenant: str, fact_id: str, *, valid_to: datetime | None = None) -> Call[Fact]:
    """End a fact's validity at ``valid_to`` (default now) without a replacement."""
    path = _tenant(tenant, f"/facts/{_seg(fact_id)}/retract")
    return Call("POST", path, _model(Fact), json=_json(valid_to=valid_to))


def facts(
    tenant: str,
    *,
    subject: str | None = None,
    predicate: str | None = None,
    object: str | None = None,
    memory_type: str | None = None,
    as_of: datetime | None = None,
    known_at: datetime | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> Call[FactsPublic]:
    """One page of the facts valid at ``as_of`` as known at ``known_at`` (default now)."""
    params = _params(
        subject=subject,
        predicate=predicate,
        object=object,
        memory_type=memory_type,
        as_of=as_of,
        known_at=known_at,
        limit=limit,
        cursor=cursor,
    )
    return Call("GET", _tenant(tenant, "/facts"), _model(FactsPublic), params=params)


def history(
    tenant: str,
    *,
    subject: str,
    predicate: str,
    object: str | None = None,
    known_at: datetime | None = None,
) -> Call[FactHistory]:
    """Every version of one timeline as known at ``known_at``, ordered by valid_from."""
    params = _params(subject=subject, predicate=predicate, object=object, known_at=known_at)
    return Call("GET", _tenant(tenant, "/facts/history"), _model(FactHistory), params=params)


# -- entities --------------------------------------------------------------------------
def entity(
    tenant: str,
    entity_id: str,
    *,
    as_of: datetime | None = None,
    known_at: datetime | None = None,
) -> Call[EntityPublic]:
    """The entity and its facts (as subject or object) valid at ``as_of``."""
    path = _tenant(tenant, f"/entities/{_seg(entity_id)}")
    return Call("GET", path, _model(EntityPublic), params=_params(as_of=as_of, known_at=known_at))


def neighbors(
    tenant: str,
    entity_id: str,
    *,
    depth: int = 1,
    predicates: Sequence[str] | None = None,
    direction: Direction = Direction.BOTH,
    as_of: datetime | None = None,
    known_at: datetime | None = None,
) -> Call[Neighborhood]:
    """The subgraph reachable in ``depth`` hops over facts valid at ``as_of``."""
    params = _params(
        depth=depth,
        predicates=predicates,
        direction=direction.value,
        as_of=as_of,
        known_at=known_at,
    )
    path = _tenant(tenant, f"/entities/{_seg(entity_id)}/neighbors")
    return Call("GET", path, _model(Neighborhood), params=params)


def entity_predicates(
    tenant: str,
    entity_id: str,
    *,
    known_at: datetime | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> Call[EntityPredicates]:
    """The predicates of every timeline of the entity, at any valid time, in name order."""
    path = _tenant(tenant, f"/entities/{_seg(entity_id)}/predicates")
    params = _params(known_at=known_at, limit=limit, cursor=cursor)
    return Call("GET", path, _model(EntityPredicates), params=params)


# -- schema ----------------------------------------------------------------------------
def get_schema(tenant: str) -> Call[MemorySchema]:
    """The tenant's memory schema (the permissive default, version 0, until one is put)."""
    return Call("GET", _tenant(tenant, "/schema"), _model(MemorySchema))


def put_schema(tenant: str, schema: MemorySchema | Mapping[str, Any]) -> Call[MemorySchema]:
    """Store a new schema version; the server assigns the version number."""
    return Call("PUT", _tenant(tenant, "/schema"), _model(MemorySchema), json=_body(schema))


# -- erasure --------------------------------------------------------------------------
def forget_entity(tenant: str, entity_id: str, *, dry_run: bool = False) -> Call[ForgetResult]:
    """Erase an entity, every fact about it and every episode that mentions it; with
    ``dry_run`` only count what would go."""
    path = _tenant(tenant, f"/entities/{_seg(entity_id)}/forget")
    return Call("POST", path, _model(ForgetResult), json={"dry_run": dry_run})


def delete_tenant(tenant: str) -> Call[TenantErased]:
    """Erase a whole tenant (admin key only)."""
    return Call("DELETE", _tenant(tenant), _model(TenantErased))


# -- retrieval -------------------------------------------------------------------------
def search(
    tenant: str,
    query: str,
    *,
    as_of: datetime | None = None,
    known_at: datetime | None = None,
    limit: int | None = None,
    scopes: Sequence[Scope] | None = None,
    filters: SearchFilters | Mapping[str, Any] | None = None,
) -> Call[SearchResponse]:
    """Hybrid search (fulltext, vector, graph expansion) over what is valid at ``as_of``."""
    body = _json(
        query=query,
        as_of=as_of,
        known_at=known_at,
        limit=limit,
        scopes=list(scopes) if scopes is not None else None,
        filters=_body(filters) if filters is not None else None,
    )
    return Call("POST", _tenant(tenant, "/search"), _model(SearchResponse), json=body)


def context(
    tenant: str,
    question: str,
    *,
    as_of: datetime | None = None,
    known_at: datetime | None = None,
    max_facts: int | None = None,
    max_tokens: int | None = None,
) -> Call[ContextResponse]:
    """The smallest cited context for a question: exact ledger state first, then search."""
    body = _json(
        question=question,
        as_of=as_of,
        known_at=known_at,
        max_facts=max_facts,
        max_tokens=max_tokens,
    )
    return Call("POST", _tenant(tenant, "/context"), _model(ContextResponse), json=body)


# -- extraction review -----------------------------------------------------------------
def candidates(
    tenant: str,
    *,
    status: CandidateStatus | None = None,
    episode_id: str | None = None,
    limit: int | None = None,
) -> Call[CandidatesPublic]:
    """Candidates held back by the schema's policy, oldest first (default: pending)."""
    params = _params(status=status.value if status else None, episode_id=episode_id, limit=limit)
    return Call("GET", _tenant(tenant, "/candidates"), _model(CandidatesPublic), params=params)


def candidate(tenant: str, candidate_id: str) -> Call[PendingCandidate]:
    """One held candidate."""
    path = _tenant(tenant, f"/candidates/{_seg(candidate_id)}")
    return Call("GET", path, _model(PendingCandidate))


def confirm_candidate(
    tenant: str, candidate_id: str, *, note: str | None = None
) -> Call[CandidateConfirmed]:
    """Write a pending candidate through the ledger."""
    path = _tenant(tenant, f"/candidates/{_seg(candidate_id)}/confirm")
    return Call("POST", path, _model(CandidateConfirmed), json=_json(note=note))


def reject_candidate(
    tenant: str, candidate_id: str, *, note: str | None = None
) -> Call[PendingCandidate]:
    """Refuse a pending candidate: it is kept, marked rejected, never written."""
    path = _tenant(tenant, f"/candidates/{_seg(candidate_id)}/reject")
    return Call("POST", path, _model(PendingCandidate), json=_json(note=note))


def merge_candidates(
    tenant: str, *, status: MergeStatus | None = None, limit: int | None = None
) -> Call[MergeCandidatesPublic]:
    """Entities whose names look like duplicates of existing ones (default: open)."""
    params = _params(status=status.value if status else None, limit=limit)
    path = _tenant(tenant, "/merge-candidates")
    return Call("GET", path, _model(MergeCandidatesPublic), params=params)


def accept_merge_candidate(tenant: str, candidate_id: str) -> Call[MergeCandidate]:
    """Record the name as an alias of the existing entity."""
    path = _tenant(tenant, f"/merge-candidates/{_seg(candidate_id)}/accept")
    return Call("POST", path, _model(MergeCandidate))


def dismiss_merge_candidate(tenant: str, candidate_id: str) -> Call[MergeCandidate]:
    """Keep the two entities apart."""
    path = _tenant(tenant, f"/merge-candidates/{_seg(candidate_id)}/dismiss")
    return Call("POST", path, _model(MergeCandidate))


# -- service ---------------------------------------------------------------------------
def healthz() -> Call[Health]:
    """The process is up."""
    return Call("GET", "/healthz", _model(Health))


def readyz() -> Call[Ready]:
    """The store answers (503 otherwise)."""
    return Call("GET", "/readyz", _model(Ready))


def metrics() -> Call[str]:
    """Prometheus metrics, as text."""
    return Call("GET", "/metrics", _text)
