"""``sgam import``: JSON Lines of REST request bodies, streamed into a store or a server.

Each line is one body: ``POST /episodes`` (it has ``content``) or ``POST /facts`` (it has
``facts`` and no ``content``). Lines are read one at a time (at most
:data:`MAX_LINE_BYTES` each), facts lines are gathered into batches of about ``batch``
facts, so memory does not grow with the file. A batch refused as a whole is retried
line by line, so only the bad line is refused; a refused line writes nothing and goes to
the reject file with its line number and the problem the API would answer.

Re-running a file writes nothing new: an episode already stored with the same content
is a no-op, the same fact from the same source is ``unchanged``. So an interrupted
import resumes by running it again. (Not so for an episode without ``episode_id``, new on
every run, nor for conflicting facts under ``latest_recorded_wins``, written again.)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any, Protocol

from pydantic import ValidationError as PydanticValidationError

from api.client import SgamAPIError, SgamClient
from api.errors import error_response, validation_items
from api.limits import NotPortableJSON, body_nesting_error, load_portable
from api.problems import HTTP_PROBLEMS, problem_type
from api.schemas import MAX_BATCH, FactsCreate
from extraction import choose_mode, needs_model
from graph.errors import SgamError
from graph.model import (
    ConflictPolicy,
    EpisodeCreate,
    EpisodeStatus,
    ExtractMode,
    MemoryDelta,
    WriteStatus,
)
from graph.service import MemoryService

MAX_LINE_BYTES = 1024 * 1024  # the same limit as one request body
DEFAULT_BATCH = 1000

Problem = dict[str, Any]


class RejectFileFailed(Exception):
    """A refused line's record could not be written to the reject file (a full disk): the
    import stops there, as every later refusal would be lost too."""

    def __init__(self, line: int, report: ImportReport, error: OSError) -> None:
        super().__init__(f"line {line}: {error}")
        self.line = line  # the refused line whose record was lost
        self.report = report
        self.error = error


class Refused(Exception):
    """A line the API would have answered with this problem."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.get("detail"))
        self.problem = problem


def _problem(status: int, detail: str, **members: Any) -> Problem:
    slug, title = HTTP_PROBLEMS[status]
    body = {"type": problem_type(slug), "title": title, "status": status, "detail": detail}
    body.update(members)
    return body


def _from_error(error: SgamError, instance: str) -> Problem:
    body = json.loads(bytes(error_response(error, instance=instance).body))
    assert isinstance(body, dict)
    return body


@dataclass
class Written:
    """What one write did: new or changed facts, and facts that were already there."""

    facts: int = 0
    unchanged: int = 0
    episodes: int = 0


class Sink(Protocol):
    """Where lines go: a store in-process or a server over HTTP."""

    max_facts: int

    def episode(self, body: EpisodeCreate, *, policy: ConflictPolicy) -> Written: ...

    def facts(self, deltas: list[MemoryDelta], *, policy: ConflictPolicy) -> Written: ...


# Outcomes that wrote something: a new interval, or a new source on a recorded one.
# ``unchanged`` and ``kept_existing`` (the policy kept the recorded fact) write nothing.
WRITES = frozenset({WriteStatus.CREATED, WriteStatus.CORROBORATED})


def _count(outcomes: list[WriteStatus]) -> Written:
    written = sum(1 for o in outcomes if o in WRITES)
    return Written(facts=written, unchanged=len(outcomes) - written)


def queues_extraction(service: MemoryService, *, tenant_id: str, body: EpisodeCreate) -> bool:
    """Whether an imported episode is stored ``pending`` for ``sgam worker``.

    An import never calls a model, and does not know whether a worker will have one: an
    episode that asks for ``sync`` or ``background`` is queued (``sync`` cannot wait for
    its extraction here), one that names no mode is queued only when an event mapping
    does it (as ``POST /episodes`` does without a model).
    """
    if body.extract is not None:
        return body.extract != ExtractMode.NONE
    mode = choose_mode(service, tenant_id=tenant_id, body=body, extractor=None)
    return mode != ExtractMode.NONE


class ServiceSink:
    """Writes through :class:`MemoryService`, deciding as ``POST /episodes`` and
    ``POST /facts`` do. Episodes asking for extraction are queued (status ``pending``)
    for ``sgam worker``; no model is called during an import."""

    max_facts = 1_000_000

    def __init__(self, service: MemoryService, *, tenant_id: str) -> None:
        self.service = service
        self.tenant_id = tenant_id

    def episode(self, body: EpisodeCreate, *, policy: ConflictPolicy) -> Written:
        t = self.tenant_id
        try:
            queued = queues_extraction(self.service, tenant_id=t, body=body)
            # The episode and its facts in one transaction: a refused line leaves nothing.
            _, created, result = self.service.capture(
                tenant_id=t,
                body=body,
                status=EpisodeStatus.PENDING if queued else EpisodeStatus.STORED,
                policy=policy,
                # Which workers may claim it: only those with a model, unless a mapping does.
                needs_model=needs_model(self.service, tenant_id=t, body=body) if queued else None,
            )
        except SgamError as e:
            raise Refused(_from_error(e, f"/v1/tenants/{t}/episodes")) from e
        if not created and not result.outcomes:
            # An identical redelivery: its facts are all in the ledger already.
            return Written(unchanged=len(body.facts or []))
        w = _count(result.outcomes)  # again: facts a failed first import lost are written
        w.episodes = 1 if created else 0
        return w

    def facts(self, deltas: list[MemoryDelta], *, policy: ConflictPolicy) -> Written:
        try:
            result = self.service.write_facts(
                tenant_id=self.tenant_id, deltas=deltas, policy=policy
            )
        except SgamError as e:
            raise Refused(_from_error(e, f"/v1/tenants/{self.tenant_id}/facts")) from e
        return _count(result.outcomes)


class HttpSink:
    """Posts to a server; its answers are the problems recorded for refused lines."""

    max_facts = MAX_BATCH

    def __init__(self, client: SgamClient, *, tenant_id: str) -> None:
        self.client = client
        self.tenant_id = tenant_id

    def episode(self, body: EpisodeCreate, *, policy: ConflictPolicy) -> Written:
        if body.extract == ExtractMode.SYNC:  # queued, as in-process: an import never waits
            body = body.model_copy(update={"extract": ExtractMode.BACKGROUND})
        try:
            written = self.client.create_episode(self.tenant_id, body)
        except SgamAPIError as e:
            raise Refused(e.problem.model_dump(exclude_none=True)) from e
        if not written.created:
            return Written(unchanged=len(body.facts or []))
        return Written(facts=len(written.facts), episodes=1)

    def facts(self, deltas: list[MemoryDelta], *, policy: ConflictPolicy) -> Written:
        try:
            result = self.client.write_facts(self.tenant_id, deltas, conflict_policy=policy)
        except SgamAPIError as e:
            raise Refused(e.problem.model_dump(exclude_none=True)) from e
        return _count(result.outcomes)


@dataclass
class ImportReport:
    lines: int = 0
    refused: int = 0
    episodes: int = 0
    facts: int = 0
    unchanged: int = 0
    bytes_read: int = 0

    def add(self, w: Written) -> None:
        self.facts += w.facts
        self.unchanged += w.unchanged
        self.episodes += w.episodes

    @property
    def exit_code(self) -> int:
        return 1 if self.refused else 0

    def summary(self) -> str:
        return (
            f"{self.lines} lines: {self.episodes} episodes and {self.facts} facts written,"
            f" {self.unchanged} facts already there, {self.refused} lines refused"
        )


def read_lines(stream: IO[bytes]) -> Iterator[tuple[int, bytes | None, int]]:
    """(line number, the line or None when it is over the limit, bytes consumed)."""
    number = 0
    while True:
        raw = stream.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        number += 1
        size = len(raw)
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            # Skip the rest of the long line without holding it.
            while raw and not raw.endswith(b"\n"):
                raw = stream.readline(MAX_LINE_BYTES)
                size += len(raw)
            yield number, None, size
            continue
        yield number, raw, size


class NotJSON(ValueError):
    """Text that is not JSON, or that nests too deep for the parser to find its end."""


def load_json(raw: bytes) -> Any:
    """One JSON text, or :class:`NotJSON` / :class:`NotPortableJSON` saying why not.

    Never a RecursionError: the nesting is the caller's to bound first
    (:func:`api.limits.body_nesting_error`, unbalanced text included); should anything
    still recurse too deep, it is malformed text.
    """
    try:
        return load_portable(raw)  # NotPortableJSON: as the API refuses such a body
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise NotJSON(str(e)) from e
    except RecursionError as e:
        raise NotJSON("it nests too deep to parse") from e


def _decode(raw: bytes) -> Any:
    """The line's JSON, refused as ``POST`` refuses such a body: 422 past the nesting
    limit (naming the member), 400 when malformed or not portable."""
    too_deep = body_nesting_error(raw)
    if too_deep is not None:
        items = [i.as_dict() for i in too_deep.errors]
        raise Refused(_problem(422, str(too_deep), errors=items))
    try:
        return load_json(raw)
    except NotJSON as e:
        raise Refused(_problem(400, f"the request body is not valid JSON: {e}")) from e
    except NotPortableJSON as e:
        raise Refused(_problem(400, f"the request body is not portable JSON: {e}")) from e


def parse_line(raw: bytes) -> EpisodeCreate | FactsCreate | None:
    """One body, told apart by shape; None for a blank line. Raises :class:`Refused`."""
    if not raw.strip():
        return None
    body = _decode(raw)
    if not isinstance(body, dict):
        raise Refused(_problem(422, "a line must be a JSON object"))
    model: type[EpisodeCreate] | type[FactsCreate]
    if "content" in body:
        model = EpisodeCreate
    elif "facts" in body:
        model = FactsCreate
    else:
        raise Refused(
            _problem(
                422,
                "a line is a POST /episodes body (with content) or a POST /facts body"
                " (with facts and no content)",
            )
        )
    try:
        return model.model_validate(body)
    except PydanticValidationError as e:
        items = validation_items(
            [{**err, "loc": ("body", *err["loc"])} for err in e.errors(include_input=False)]
        )
        detail = "; ".join(
            f"{'item ' + str(i['index']) + ' ' if 'index' in i else ''}{i.get('field', '')}:"
            f" {i['reason']}"
            for i in items
        )
        raise Refused(_problem(422, detail, errors=items)) from e


@dataclass
class _Pending:
    """Facts lines waiting for one batch write."""

    policy: ConflictPolicy | None = None
    lines: list[tuple[int, list[MemoryDelta]]] = field(default_factory=list)
    size: int = 0
    cited: set[str] = field(default_factory=set)  # the episodes these facts name

    def waits_for(self, episode: EpisodeCreate) -> bool:
        """Whether the episode must wait for the pending facts: in file order they come
        first when it carries facts of its own (their order decides supersession) or when
        they cite its id (refused in file order, unless it is already stored)."""
        return bool(self.lines) and (
            bool(episode.facts)
            or (episode.episode_id is not None and episode.episode_id in self.cited)
        )


def import_lines(
    stream: IO[bytes],
    sink: Sink,
    *,
    rejects: IO[str] | None,
    batch: int = DEFAULT_BATCH,
    policy: ConflictPolicy | None = None,
    progress: Callable[[ImportReport], None] | None = None,
) -> ImportReport:
    """Import every line of ``stream``; ``policy`` applies to lines that name none."""
    report = ImportReport()
    pending = _Pending()
    limit = max(1, min(batch, sink.max_facts))

    def refuse(number: int, problem: Problem) -> None:
        report.refused += 1
        if rejects is not None:
            try:
                rejects.write(json.dumps({"line": number, **problem}) + "\n")
            except OSError as e:  # the reject file's own failure, not the input's
                raise RejectFileFailed(number, report, e) from e

    def flush() -> None:
        if not pending.lines:
            return
        p = pending.policy or ConflictPolicy.REJECT
        try:
            report.add(sink.facts([d for _, ds in pending.lines for d in ds], policy=p))
        except Refused as whole:
            if len(pending.lines) == 1:
                refuse(pending.lines[0][0], whole.problem)
            else:  # one line by one, so only the bad lines are refused
                for number, deltas in pending.lines:
                    try:
                        report.add(sink.facts(deltas, policy=p))
                    except Refused as r:
                        refuse(number, r.problem)
        pending.lines, pending.size = [], 0
        pending.cited.clear()

    for number, raw, size in read_lines(stream):
        report.lines = number
        report.bytes_read += size
        try:
            if raw is None:
                raise Refused(
                    _problem(
                        413,
                        f"a line is over the limit of {MAX_LINE_BYTES} bytes",
                        limit=MAX_LINE_BYTES,
                    )
                )
            body = parse_line(raw)
            if body is None:
                pass  # a blank line is read and writes nothing
            elif isinstance(body, EpisodeCreate):
                # An episode alone is written at once, ahead of the facts gathered so far:
                # no decision about them depends on it, and files that alternate an episode
                # and its facts still write full batches (one per line cost 3-5x).
                if pending.waits_for(body):
                    flush()
                report.add(sink.episode(body, policy=policy or ConflictPolicy.REJECT))
            else:
                line_policy = (
                    body.conflict_policy if "conflict_policy" in body.model_fields_set else policy
                )
                if pending.lines and (
                    line_policy != pending.policy or pending.size + len(body.facts) > limit
                ):
                    flush()
                pending.policy = line_policy
                pending.lines.append((number, body.facts))
                pending.size += len(body.facts)
                pending.cited.update(d.source_episode_id for d in body.facts if d.source_episode_id)
                if pending.size >= limit:
                    flush()
        except Refused as r:
            refuse(number, r.problem)
        if progress is not None:
            progress(report)
    flush()
    if progress is not None:
        progress(report)
    return report


__all__ = [
    "DEFAULT_BATCH",
    "MAX_LINE_BYTES",
    "HttpSink",
    "ImportReport",
    "NotJSON",
    "NotPortableJSON",
    "Refused",
    "RejectFileFailed",
    "ServiceSink",
    "Sink",
    "import_lines",
    "load_json",
    "parse_line",
    "queues_extraction",
    "read_lines",
]
