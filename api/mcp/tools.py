"""The ten tools: their fixed names, what an LLM is told about them, their argument and
result models (the REST API's own), their hints, and the service call each one makes.

Arguments are validated by the same pydantic models as the REST bodies and query
parameters, and a tool calls the same functions as its REST route, so a tool and its
route accept, refuse and answer alike.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from mcp_types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from api.metrics import Metrics
from api.routes.episodes import write_episode
from api.routes.facts import facts_page, history_page
from api.routes.search import (
    ContextRequest,
    ContextResponse,
    SearchRequest,
    SearchResponse,
    build_context,
    run_search,
)
from api.schemas import EpisodeWritten, FactHistory, FactsCreate, FactsPublic
from extraction import ExtractionSettings, Extractor
from graph.model import (
    DeleteResult,
    Direction,
    EpisodeCreate,
    Fact,
    Instant,
    Neighborhood,
    WriteResult,
)
from graph.schema import MemorySchema
from graph.service import MAX_DEPTH, MAX_LIMIT, MAX_NEIGHBORHOOD, MemoryService


@dataclass(frozen=True)
class Services:
    """What the tools call; one per server process (its tenant comes with each call)."""

    service: MemoryService
    metrics: Metrics
    settings: ExtractionSettings
    extractor: Extractor | None = None


# -- arguments of the tools whose REST form is a query string ------------------------------
class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class GetFactsArgs(_Args):
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    memory_type: str | None = None
    as_of: Instant | None = None
    known_at: Instant | None = None
    limit: int = Field(default=100, ge=1, le=MAX_LIMIT)
    cursor: str | None = None


class GetHistoryArgs(_Args):
    subject: str
    predicate: str
    object: str | None = None
    known_at: Instant | None = None
    limit: int = Field(default=MAX_LIMIT, ge=1, le=MAX_LIMIT)
    cursor: str | None = None


class GetNeighborsArgs(_Args):
    entity_id: str
    depth: int = Field(default=1, ge=1, le=MAX_DEPTH)
    predicates: list[Annotated[str, Field(min_length=1)]] | None = None
    direction: Direction = Direction.BOTH
    as_of: Instant | None = None
    known_at: Instant | None = None
    limit: int = Field(default=MAX_NEIGHBORHOOD, ge=1, le=MAX_NEIGHBORHOOD)


class RetractFactArgs(_Args):
    fact_id: str
    valid_to: Instant | None = None


class DeleteEpisodeArgs(_Args):
    episode_id: str


class NoArgs(_Args):
    pass


# -- the calls -----------------------------------------------------------------------------
def _add_episode(s: Services, tenant: str, a: EpisodeCreate) -> EpisodeWritten:
    return write_episode(
        s.service,
        tenant_id=tenant,
        body=a,
        metrics=s.metrics,
        extractor=s.extractor,
        settings=s.settings,
    )


def _add_facts(s: Services, tenant: str, a: FactsCreate) -> WriteResult:
    result = s.service.write_facts(tenant_id=tenant, deltas=a.facts, policy=a.conflict_policy)
    s.metrics.record_writes(result.outcomes)
    return result


def _search(s: Services, tenant: str, a: SearchRequest) -> SearchResponse:
    return run_search(s.service.store, tenant_id=tenant, body=a)


def _get_context(s: Services, tenant: str, a: ContextRequest) -> ContextResponse:
    return build_context(s.service.store, tenant_id=tenant, body=a)


def _get_facts(s: Services, tenant: str, a: GetFactsArgs) -> FactsPublic:
    return facts_page(s.service, tenant_id=tenant, **a.model_dump())


def _get_history(s: Services, tenant: str, a: GetHistoryArgs) -> FactHistory:
    return history_page(s.service, tenant_id=tenant, **a.model_dump())


def _get_neighbors(s: Services, tenant: str, a: GetNeighborsArgs) -> Neighborhood:
    return s.service.neighbors(
        tenant_id=tenant,
        entity_id=a.entity_id,
        depth=a.depth,
        predicates=a.predicates,
        direction=a.direction,
        as_of=a.as_of,
        known_at=a.known_at,
        limit=a.limit,
    )


def _retract_fact(s: Services, tenant: str, a: RetractFactArgs) -> Fact:
    return s.service.retract(tenant_id=tenant, fact_id=a.fact_id, valid_to=a.valid_to)


def _delete_episode(s: Services, tenant: str, a: DeleteEpisodeArgs) -> DeleteResult:
    return s.service.delete_episode(tenant_id=tenant, episode_id=a.episode_id)


def _get_schema(s: Services, tenant: str, a: NoArgs) -> MemorySchema:
    return s.service.schema(tenant_id=tenant)


# -- the specs -------------------------------------------------------------------------------
@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    arguments: type[BaseModel]
    result: type[BaseModel]
    annotations: ToolAnnotations
    run: Callable[[Services, str, Any], BaseModel]
    # Words for the arguments the models leave undescribed (injected into the schema).
    argument_help: dict[str, str]

    def input_schema(self) -> dict[str, Any]:
        schema = self.arguments.model_json_schema()
        props = schema.setdefault("properties", {})
        for name, help_text in self.argument_help.items():
            if name not in props:
                raise AssertionError(f"{self.name}: no argument {name!r} to describe")
            props[name].setdefault("description", help_text)
        return schema

    def output_schema(self) -> dict[str, Any]:
        return self.result.model_json_schema(mode="serialization")


READ = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

AS_OF = (
    "Valid time, RFC 3339 with an offset (e.g. 2026-06-02T00:00:00Z): what was true in the "
    "world then. Omit for now."
)
KNOWN_AT = (
    "System time, RFC 3339: answer with what sgam believed at that moment (audits, "
    "reproducing an earlier answer). Omit for now."
)
SUBJECT = "Entity id of the subject, as written in facts (e.g. mira)."
PREDICATE = "Predicate name in snake_case (e.g. passport_deadline)."

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="add_episode",
        title="Record an episode",
        description=(
            "Record one episode (a message, document, tool result or event) in memory, "
            "with the facts you extracted from it. Call it once per turn worth "
            "remembering. Pass episode_id (stable, e.g. '<session>-<turn>') so a retry "
            "records nothing twice; session_id groups a conversation. Each item of facts "
            "is {subject, predicate, value or object, ...}; its source is this episode and "
            "valid_from defaults to occurred_at. A newer value supersedes the older one "
            "from its valid_from on; nothing is overwritten. extract=sync|background asks "
            "the server's own model to extract facts (when one is configured)."
        ),
        arguments=EpisodeCreate,
        result=EpisodeWritten,
        annotations=ToolAnnotations(
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=False,  # only with an episode_id
            open_world_hint=False,
        ),
        run=_add_episode,
        argument_help={
            "content": "The text of the episode (or a JSON object for an event).",
            "occurred_at": "When it happened, RFC 3339 with an offset.",
            "episode_id": "Your id for it; the same id and content again is a no-op.",
            "session_id": "The conversation or thread it belongs to.",
            "facts": "Facts stated by this episode, as in add_facts.",
            "extract": "none (default when facts are given), sync, or background.",
        },
    ),
    ToolSpec(
        name="add_facts",
        title="Write facts",
        description=(
            "Write a batch of facts in one transaction (all or none). Each item: subject, "
            "predicate, and value (a literal) or object (another entity id); optional "
            "valid_from/valid_to (when it holds in the world), source_episode_id, "
            "confidence. Two values of a single-valued predicate starting at the same "
            "instant are refused unless conflict_policy says which wins."
        ),
        arguments=FactsCreate,
        result=WriteResult,
        annotations=ToolAnnotations(
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=True,  # the same statement again is recorded once
            open_world_hint=False,
        ),
        run=_add_facts,
        argument_help={
            "facts": "1 to 1000 facts.",
            "conflict_policy": "reject (default), latest_recorded_wins or highest_confidence_wins.",
        },
    ),
    ToolSpec(
        name="search",
        title="Search memory",
        description=(
            "Hybrid search (words, meaning and the graph around them) over the facts, "
            "entities and episodes valid at as_of. Use it to explore; to answer a "
            "question, get_context is usually better."
        ),
        arguments=SearchRequest,
        result=SearchResponse,
        annotations=READ,
        run=_search,
        argument_help={
            "query": "What to look for, in words.",
            "as_of": AS_OF,
            "known_at": KNOWN_AT,
            "limit": "At most this many results.",
            "scopes": "Kinds of results: facts, entities, episodes.",
        },
    ),
    ToolSpec(
        name="get_context",
        title="Context for a question",
        description=(
            "The smallest cited context that answers a question: the facts valid at as_of "
            "(exact state first), each citing its source episode, ready to put in a "
            "prompt (text), plus the facts and episodes themselves. Superseded values are "
            "left out. Call it before answering anything that depends on memory; pass "
            "as_of when the question is about a past date."
        ),
        arguments=ContextRequest,
        result=ContextResponse,
        annotations=READ,
        run=_get_context,
        argument_help={
            "question": "The user's question, in words.",
            "as_of": AS_OF,
            "known_at": KNOWN_AT,
        },
    ),
    ToolSpec(
        name="get_facts",
        title="Read facts",
        description=(
            "The facts valid at as_of (default now), filtered by subject, predicate and/or "
            "object, paged: pass next_cursor back as cursor for more."
        ),
        arguments=GetFactsArgs,
        result=FactsPublic,
        annotations=READ,
        run=_get_facts,
        argument_help={
            "subject": SUBJECT,
            "predicate": PREDICATE,
            "object": "Entity id of the object.",
            "as_of": AS_OF,
            "known_at": KNOWN_AT,
            "limit": f"At most this many facts (1 to {MAX_LIMIT}).",
            "cursor": "next_cursor of the previous page.",
        },
    ),
    ToolSpec(
        name="get_history",
        title="History of a fact",
        description=(
            "Every interval of one timeline (subject + predicate), oldest first: what the "
            "value was, from when to when, and which episode said so. Paged: pass "
            "next_cursor back as cursor for more."
        ),
        arguments=GetHistoryArgs,
        result=FactHistory,
        annotations=READ,
        run=_get_history,
        argument_help={
            "subject": SUBJECT,
            "predicate": PREDICATE,
            "object": "For a many-valued predicate: the object whose timeline to read.",
            "known_at": KNOWN_AT,
            "limit": f"At most this many versions (1 to {MAX_LIMIT}).",
            "cursor": "next_cursor of the previous page.",
        },
    ),
    ToolSpec(
        name="get_neighbors",
        title="Entities around an entity",
        description=(
            "The entities reachable from entity_id in depth hops over facts valid at "
            "as_of, and those facts (e.g. customer → account → policy)."
        ),
        arguments=GetNeighborsArgs,
        result=Neighborhood,
        annotations=READ,
        run=_get_neighbors,
        argument_help={
            "entity_id": "The entity to start from.",
            "depth": f"Hops, 1 to {MAX_DEPTH}.",
            "predicates": "Follow only these predicates.",
            "direction": "out, in or both.",
            "as_of": AS_OF,
            "known_at": KNOWN_AT,
            "limit": f"At most this many facts (1 to {MAX_NEIGHBORHOOD}); a larger "
            "neighbourhood is refused, never cut: narrow depth or predicates.",
        },
    ),
    ToolSpec(
        name="retract_fact",
        title="Retract a fact",
        description=(
            "End a fact's validity at valid_to (default now) without a replacement: it "
            "stopped being true. To change a value, write the new one instead."
        ),
        arguments=RetractFactArgs,
        result=Fact,
        annotations=ToolAnnotations(
            read_only_hint=False,
            destructive_hint=True,
            idempotent_hint=False,
            open_world_hint=False,
        ),
        run=_retract_fact,
        argument_help={
            "fact_id": "fact_id of the fact, as returned by the other tools.",
            "valid_to": "When it stopped being true, RFC 3339; default now.",
        },
    ),
    ToolSpec(
        name="delete_episode",
        title="Delete an episode",
        description=(
            "Really delete an episode and every fact only it supported; values those facts "
            "had superseded become current again. For data recorded by mistake."
        ),
        arguments=DeleteEpisodeArgs,
        result=DeleteResult,
        annotations=ToolAnnotations(
            read_only_hint=False,
            destructive_hint=True,
            idempotent_hint=True,
            open_world_hint=False,
        ),
        run=_delete_episode,
        argument_help={"episode_id": "The episode to delete."},
    ),
    ToolSpec(
        name="get_schema",
        title="Memory schema",
        description=(
            "The tenant's memory schema: entity types and predicates with their value "
            "types and cardinality. Read it to name facts the way this memory expects."
        ),
        arguments=NoArgs,
        result=MemorySchema,
        annotations=READ,
        run=_get_schema,
        argument_help={},
    ),
)

TOOL_NAMES = tuple(t.name for t in TOOLS)
BY_NAME = {t.name: t for t in TOOLS}
