"""Episode → extractor → validation → policy → ledger, and the episode's recorded outcome.

The episode is already stored when any of this runs (capture first). Then:

1. route: an event mapping of the tenant's schema matches → the mapper (no model);
   otherwise the configured extractor (one model call); otherwise nothing can extract it;
2. screen every candidate (shape, pydantic, schema types); resolve model-named entities;
3. policy: hold what needs confirmation or more support; write the rest through
   :meth:`MemoryService.write_facts` — the temporal core decides supersession;
4. record on the episode: ``extracted`` with the rejected candidates and their reasons,
   or ``failed`` / back to ``pending`` with the reason. Nothing is dropped silently.

The same function serves ``extract=sync`` (in the request) and the queue workers; both
hold a lease on the episode while they work, so a crash in either is recovered by a worker.
"""

from __future__ import annotations

import logging
import random
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta

from extraction.candidates import screen, write_each
from extraction.context import known_state
from extraction.lease import LeaseKeeper
from extraction.mapper import EventMapper, mapped_event
from extraction.models import (
    ExtractionError,
    ExtractionReport,
    ExtractionRequest,
    Extractor,
    NoExtractorError,
    Proposal,
)
from extraction.policy import apply_policy
from extraction.resolution import EntityResolver
from extraction.settings import ExtractionSettings
from graph.errors import ConflictError, NotFoundError, SgamError, invalid
from graph.model import Entity, Episode, EpisodeCreate, EpisodeStatus, ExtractMode, ModelUsage
from graph.queue import QueueStore
from graph.schema import MemorySchema
from graph.service import MemoryService
from graph.timeutil import utcnow

log = logging.getLogger("sgam.extraction")

# Statuses from which an episode may be (re)queued by hand, and by the POST route.
RETRYABLE = frozenset({EpisodeStatus.FAILED, EpisodeStatus.STORED, EpisodeStatus.EXTRACTED})
FRESH = frozenset({EpisodeStatus.STORED, EpisodeStatus.PENDING})

# Registered by worker pools in this process: each wakes its idle workers.
_wakeups: list[Callable[[], None]] = []


def register_wakeup(wake: Callable[[], None]) -> None:
    _wakeups.append(wake)


def unregister_wakeup(wake: Callable[[], None]) -> None:
    if wake in _wakeups:
        _wakeups.remove(wake)


def wake_workers() -> None:
    """Tell in-process workers that an episode is due (they also poll; this saves the wait)."""
    for wake in list(_wakeups):
        wake()


def choose_extractor(
    schema: MemorySchema, episode: Episode, extractor: Extractor | None
) -> Extractor:
    if mapped_event(schema, episode):
        return EventMapper()
    if extractor is not None:
        return extractor
    raise NoExtractorError(
        "no extractor for this episode: no event mapping of the schema matches it and no "
        "model is configured (SGAM_LLM_BASE_URL, SGAM_LLM_MODEL)"
    )


def _mapped(service: MemoryService, *, tenant_id: str, body: EpisodeCreate) -> bool:
    probe = Episode(
        tenant_id=tenant_id,
        episode_id="probe",
        kind=body.kind,
        content=body.content,
        content_hash="",
        occurred_at=body.occurred_at,
        recorded_at=body.occurred_at,
    )
    return mapped_event(service.schema(tenant_id=tenant_id), probe)


def can_extract(
    service: MemoryService, *, tenant_id: str, body: EpisodeCreate, extractor: Extractor | None
) -> bool:
    """Whether ``extract=sync|background`` can do anything for this episode body."""
    if extractor is not None:
        return True
    return _mapped(service, tenant_id=tenant_id, body=body)


def needs_model(service: MemoryService, *, tenant_id: str, body: EpisodeCreate) -> bool:
    """Whether extracting this episode needs a model (no event mapping of the tenant's
    schema matches it): recorded on a queued episode, so that only workers with a model
    claim it."""
    return not _mapped(service, tenant_id=tenant_id, body=body)


def choose_mode(
    service: MemoryService, *, tenant_id: str, body: EpisodeCreate, extractor: Extractor | None
) -> ExtractMode:
    """The extraction an episode POST gets (API.md): as asked, else ``background`` when
    something can extract it (a model, or an event mapping of the tenant's schema), else
    ``none``; an episode carrying its own ``facts`` is already extracted. Asking for
    ``sync``/``background`` when nothing can extract it is a 422, before anything is stored.
    """
    able = can_extract(service, tenant_id=tenant_id, body=body, extractor=extractor)
    if body.extract is None:
        if body.facts or not able:
            return ExtractMode.NONE
        return ExtractMode.BACKGROUND
    if body.extract != ExtractMode.NONE and not able:
        raise invalid(
            f"extract={body.extract.value} needs an extractor: no model is configured "
            "(SGAM_LLM_BASE_URL, SGAM_LLM_MODEL) and no event mapping of the schema matches "
            "this episode; send extract=none",
            field="extract",
        )
    return body.extract


def extract_episode(
    service: MemoryService,
    queue: QueueStore,
    extractor: Extractor | None,
    episode: Episode,
    settings: ExtractionSettings,
    *,
    owner: str,
) -> ExtractionReport:
    """Run steps 1-3 for one episode, whose lease ``owner`` holds; raise
    :class:`ExtractionError` when it fails whole. The facts are written only while the
    lease is still ``owner``'s, checked in their transaction (LeaseLostError otherwise)."""
    tenant = episode.tenant_id
    schema = service.schema(tenant_id=tenant)
    chosen = choose_extractor(schema, episode, extractor)
    request = ExtractionRequest(episode=episode, schema=schema)
    catalog: list[Entity] = []
    if chosen.wants_context:  # model-named entities are resolved against the catalog
        catalog = whole_catalog(queue, tenant_id=tenant, page=settings.catalog_limit)
        # The prompt shows what the newest page names; resolution sees every entity.
        entities, facts = known_state(
            service, queue, episode, settings, catalog[: settings.catalog_limit]
        )
        request = ExtractionRequest(
            episode=episode, schema=schema, known_entities=entities, known_facts=facts
        )
    proposal: Proposal = chosen.extract(request)
    deltas, rejected = screen(schema, episode, proposal.candidates)
    rejected = proposal.rejected + rejected
    merges = []
    if chosen.wants_context:  # model-named entities; mappers and clients use real ids
        resolver = EntityResolver(threshold=settings.merge_threshold)
        resolution = resolver.resolve(
            tenant_id=tenant, episode_id=episode.episode_id, deltas=deltas, catalog=catalog
        )
        deltas, merges = resolution.deltas, resolution.merge_candidates
    now = utcnow()
    policy = apply_policy(
        queue, schema, tenant_id=tenant, episode_id=episode.episode_id, deltas=deltas, now=now
    )
    facts, refused = write_each(
        service,
        schema,
        tenant_id=tenant,
        deltas=policy.write,
        lease=(episode.episode_id, owner),
    )
    rejected += refused
    written = {f.subject for f in facts} | {f.object for f in facts if f.object is not None}
    merges = [m for m in merges if m.entity_id in written]  # only entities that now exist
    queue.add_merge_candidates(candidates=merges)
    return ExtractionReport(
        tenant_id=tenant,
        episode_id=episode.episode_id,
        status=EpisodeStatus.EXTRACTED,
        extractor=chosen.name,
        model_calls=proposal.model_calls,
        http_attempts=proposal.http_attempts,
        attempts=episode.attempts,
        facts=facts,
        rejected=rejected,
        pending=policy.pending,
        merge_candidates=merges,
        usage=total_usage(episode.usage, proposal.usage),
    )


def whole_catalog(queue: QueueStore, *, tenant_id: str, page: int) -> list[Entity]:
    """Every entity of the tenant, newest first, read ``page`` at a time: names resolve
    against all of them, not only the newest page (review M8). Linear in the tenant's
    entities per model-extracted episode."""
    out: list[Entity] = []
    after: tuple[datetime, str] | None = None
    while True:
        rows = queue.entity_catalog(tenant_id=tenant_id, entity_types=None, limit=page, after=after)
        out += rows
        if len(rows) < page:
            return out
        after = (rows[-1].created_at, rows[-1].entity_id)


def total_usage(before: ModelUsage | None, now: ModelUsage | None) -> ModelUsage | None:
    """The episode's model usage over its attempts (None while no model ever answered)."""
    if before is None:
        return now
    return before.plus(now)


def _usage_row(usage: ModelUsage | None) -> dict[str, object] | None:
    return None if usage is None else usage.model_dump(mode="json")


def next_attempt(
    settings: ExtractionSettings, attempts: int, retry_after: float | None
) -> datetime:
    """Exponential backoff with jitter (so failed episodes do not return in lockstep),
    never sooner than the endpoint's Retry-After."""
    base = settings.worker_backoff_seconds * 2 ** max(0, attempts - 1)
    wait = min(settings.worker_backoff_max_seconds, base) * random.uniform(0.8, 1.2)
    if retry_after is not None:
        wait = max(wait, retry_after)
    return utcnow() + timedelta(seconds=wait)


def run_claimed(
    service: MemoryService,
    queue: QueueStore,
    extractor: Extractor | None,
    episode: Episode,
    *,
    owner: str,
    settings: ExtractionSettings,
    may_retry: bool,
) -> ExtractionReport:
    """Process an episode this owner holds the lease of, and record the outcome."""
    keeper = LeaseKeeper(
        queue,
        tenant_id=episode.tenant_id,
        episode_id=episode.episode_id,
        owner=owner,
        seconds=settings.worker_lease_seconds,
    )
    with keeper:
        try:
            report = extract_episode(service, queue, extractor, episode, settings, owner=owner)
        except ExtractionError as e:
            return _failed(queue, episode, owner, settings, e.reason, e.retryable and may_retry, e)
        except SgamError as e:  # the store failed under us: worth another attempt
            return _failed(queue, episode, owner, settings, f"store error: {e}", may_retry, None)
        except Exception as e:  # a bug must not kill the worker; the episode shows it
            log.exception("extraction of %s crashed", episode.episode_id)
            reason = f"internal error: {type(e).__name__}: {e}"
            return _failed(queue, episode, owner, settings, reason, may_retry, None)
    report.lease_lost = not _record(
        lambda: queue.complete(
            tenant_id=episode.tenant_id,
            episode_id=episode.episode_id,
            owner=owner,
            rejected=[r.model_dump(mode="json") for r in report.rejected],
            usage=_usage_row(report.usage),
        )
    )
    return report


def _failed(
    queue: QueueStore,
    episode: Episode,
    owner: str,
    settings: ExtractionSettings,
    reason: str,
    retry: bool,
    error: ExtractionError | None,
) -> ExtractionReport:
    retry = retry and episode.attempts < settings.worker_max_attempts
    retry_at = (
        next_attempt(settings, episode.attempts, error.retry_after if error else None)
        if retry
        else None
    )
    if retry_at is not None:
        reason = f"{reason} (attempt {episode.attempts} of {settings.worker_max_attempts})"
    usage = total_usage(episode.usage, error.usage if error else None)
    kept = _record(
        lambda: queue.fail(
            tenant_id=episode.tenant_id,
            episode_id=episode.episode_id,
            owner=owner,
            error=reason,
            retry_at=retry_at,
            usage=_usage_row(usage) if error is not None and error.usage else None,
        )
    )
    log.info("extraction of %s failed: %s", episode.episode_id, reason)
    return ExtractionReport(
        tenant_id=episode.tenant_id,
        episode_id=episode.episode_id,
        status=EpisodeStatus.PENDING if retry_at else EpisodeStatus.FAILED,
        model_calls=error.model_calls if error else 0,
        http_attempts=error.http_attempts if error else 0,
        attempts=episode.attempts,
        error=reason,
        usage=usage,
        lease_lost=not kept,
    )


def _record(write: Callable[[], bool]) -> bool:
    """Record an outcome; if the store cannot take it, the lease expires and another
    worker does the episode again (the ledger makes the repeated writes no-ops)."""
    try:
        return bool(write())
    except SgamError as e:
        log.warning("cannot record an extraction outcome: %s", e)
        return False


def on_episode_created(
    service: MemoryService,
    extractor: Extractor | None,
    episode: Episode,
    mode: ExtractMode,
    *,
    settings: ExtractionSettings | None = None,
) -> ExtractionReport:
    """The write path after capture: ``none`` leaves the episode stored, ``background``
    queues it, ``sync`` extracts it now and reports the facts written."""
    settings = settings or ExtractionSettings()
    base = ExtractionReport(
        tenant_id=episode.tenant_id, episode_id=episode.episode_id, status=episode.status
    )
    if mode == ExtractMode.NONE:
        return base
    queue = service.store.queue
    now = utcnow()
    if mode == ExtractMode.BACKGROUND:
        queued = queue.enqueue(
            tenant_id=episode.tenant_id,
            episode_id=episode.episode_id,
            at=now,
            from_statuses=FRESH,
            reset_attempts=False,
        )
        wake_workers()
        return base.model_copy(update={"status": queued.status if queued else episode.status})
    owner = f"sync-{uuid.uuid4().hex[:12]}"
    claimed = queue.claim_episode(
        tenant_id=episode.tenant_id,
        episode_id=episode.episode_id,
        owner=owner,
        now=now,
        lease_until=now + timedelta(seconds=settings.worker_lease_seconds),
        from_statuses=FRESH,
    )
    if claimed is None:  # a worker has it already; its outcome will show on the episode
        return base
    return run_claimed(
        service, queue, extractor, claimed, owner=owner, settings=settings, may_retry=False
    )


def retry_episode(
    service: MemoryService, *, tenant_id: str, episode_id: str, model: bool = True
) -> Episode:
    """Queue an episode again (failed, stored or extracted); attempts start from zero.
    It is marked for the workers that can do it (a model, unless a mapping matches now).

    ``model`` says whether this deployment has a model (the API passes whether an
    extractor is configured): without one, an episode that no mapping matches is a 422,
    as ``extract=background`` is, instead of a queued episode no worker ever claims.
    """
    queue = service.store.queue
    stored = service.store.get_episode(tenant_id=tenant_id, episode_id=episode_id)
    needs = None
    if stored is not None:
        needs = not mapped_event(service.schema(tenant_id=tenant_id), stored)
        if needs and not model:
            raise invalid(
                "a retry needs an extractor: no model is configured (SGAM_LLM_BASE_URL, "
                "SGAM_LLM_MODEL) and no event mapping of the schema matches this episode",
                field="episode_id",
            )
    queued = queue.enqueue(
        tenant_id=tenant_id,
        episode_id=episode_id,
        at=utcnow(),
        from_statuses=RETRYABLE,
        reset_attempts=True,
        needs_model=needs,
    )
    if queued is None:
        current = service.store.get_episode(tenant_id=tenant_id, episode_id=episode_id)
        if current is None:
            raise NotFoundError("episode", episode_id)
        raise ConflictError(
            f"episode {episode_id!r} is {current.status.value}: it is already queued",
            episode_id=episode_id,
            episode_status=current.status.value,
        )
    wake_workers()
    return queued
