"""How a command's answer is printed: the API's JSON, a rich table, or a plain table.

A command answers with one of the API's response models. ``--json`` prints the document
the REST API returns for the same request; otherwise :func:`view` turns the model into
blocks (tables, text, notes) that :func:`write` draws with rich on a terminal and as
plain aligned text (no ANSI) when stdout is a pipe or a file. Notes, such as where the
next page starts, go to stderr so that stdout holds only the answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import singledispatch
from typing import Any, TextIO

from pydantic import BaseModel
from rich import box
from rich.console import Console
from rich.table import Table as RichTable

from api.routes.search import ContextResponse, SearchResponse
from api.schemas import EntityPublic, EpisodePublic, EpisodeWritten, FactHistory, FactsPublic
from graph.model import DeleteResult, Entity, Episode, Fact, Neighborhood, WriteResult
from graph.schema import MemorySchema
from graph.timeutil import format_instant

MAX_CELL = 80  # characters of free text (episode content) shown in a table cell


@dataclass
class Table:
    columns: Sequence[str]
    rows: list[list[str]] = field(default_factory=list)
    title: str | None = None


@dataclass
class Note:
    """A hint for the person at the terminal (stderr), not part of the answer."""

    text: str


Block = Table | Note | str


def json_document(answer: BaseModel) -> str:
    """The answer as the REST API serialises it: one JSON document."""
    return json.dumps(answer.model_dump(mode="json"), indent=2, ensure_ascii=False)


# -- cells -----------------------------------------------------------------------------
def cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return format_instant(value)
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def clip(text: str, limit: int = MAX_CELL) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def what(fact: Fact) -> str:
    """The object of a relation, or the literal value."""
    return fact.object if fact.object is not None else cell(fact.value)


def fact_table(facts: Iterable[Fact], title: str | None = None) -> Table:
    cols = ("fact_id", "subject", "predicate", "value", "valid_from", "valid_to", "source")
    rows = [
        [
            f.fact_id,
            f.subject,
            f.predicate,
            what(f),
            cell(f.valid_from),
            cell(f.valid_to) or "∞",
            f.source_episode_id or "",
        ]
        for f in facts
    ]
    return Table(cols, rows, title)


def fields_table(model: BaseModel, names: Sequence[str], title: str | None = None) -> Table:
    rows = [
        [n, clip(cell(getattr(model, n)))] for n in names if getattr(model, n) not in (None, [])
    ]
    return Table(("field", "value"), rows, title)


# -- views -----------------------------------------------------------------------------
@singledispatch
def view(answer: BaseModel) -> list[Block]:
    """Any other answer: its top-level fields."""
    return [fields_table(answer, list(type(answer).model_fields))]


@view.register
def _facts_page(answer: FactsPublic) -> list[Block]:
    blocks: list[Block] = [fact_table(answer.facts)]
    if answer.next_cursor is not None:
        blocks.append(Note(f"more facts: repeat with --cursor {answer.next_cursor}"))
    return blocks


@view.register
def _history(answer: FactHistory) -> list[Block]:
    return [fact_table(answer.facts), *_more("versions", answer.next_cursor)]


def _more(what: str, cursor: str | None) -> list[Block]:
    """The hint for the next page (on stderr), when there is one."""
    return [] if cursor is None else [Note(f"more {what}: repeat with --cursor {cursor}")]


@view.register
def _fact(answer: Fact) -> list[Block]:
    return [fact_table([answer])]


@view.register
def _written(answer: WriteResult) -> list[Block]:
    table = fact_table(answer.facts)
    table.columns = (*table.columns, "outcome")
    for row, outcome in zip(table.rows, answer.outcomes, strict=True):
        row.append(outcome.value)
    return [table]


def _entities(entities: Iterable[Entity], title: str | None = None) -> Table:
    rows = [[e.entity_id, e.entity_type, e.name, ", ".join(e.aliases)] for e in entities]
    return Table(("entity_id", "entity_type", "name", "aliases"), rows, title)


@view.register
def _entity(answer: EntityPublic) -> list[Block]:
    blocks: list[Block] = [_entities([answer], "entity"), fact_table(answer.facts, "facts")]
    return blocks + _more("facts", answer.next_cursor)


@view.register
def _neighbors(answer: Neighborhood) -> list[Block]:
    return [_entities(answer.entities, "entities"), fact_table(answer.facts, "facts")]


def _summary(item: Fact | Entity | Episode) -> str:
    if isinstance(item, Fact):
        return f"{item.subject} {item.predicate} {what(item)}"
    if isinstance(item, Entity):
        return f"{item.name} ({item.entity_type})"
    return clip(item.text())


def _id(item: Fact | Entity | Episode) -> str:
    if isinstance(item, Fact):
        return item.fact_id
    if isinstance(item, Entity):
        return item.entity_id
    return item.episode_id


@view.register
def _search(answer: SearchResponse) -> list[Block]:
    rows = [
        [
            str(n),
            h.kind,
            f"{h.score:.3f}",
            _id(h.item),
            _summary(h.item),
            ", ".join(h.source_episode_ids),
        ]
        for n, h in enumerate(answer.results, 1)
    ]
    return [Table(("#", "kind", "score", "id", "item", "sources"), rows)]


def _episodes(episodes: Iterable[Episode], title: str | None = None) -> Table:
    rows = [
        [e.episode_id, e.kind.value, cell(e.occurred_at), e.status.value, clip(e.text())]
        for e in episodes
    ]
    return Table(("episode_id", "kind", "occurred_at", "status", "content"), rows, title)


@view.register
def _context(answer: ContextResponse) -> list[Block]:
    blocks: list[Block] = [answer.text, fact_table(answer.facts, "cited facts")]
    if answer.episodes:
        blocks.append(_episodes(answer.episodes, "cited episodes"))
    return blocks


EPISODE_FIELDS = (
    "episode_id",
    "kind",
    "source",
    "occurred_at",
    "recorded_at",
    "session_id",
    "status",
    "attempts",
    "last_error",
    "content",
)


@view.register
def _episode(answer: Episode) -> list[Block]:
    names = list(EPISODE_FIELDS)
    if isinstance(answer, EpisodeWritten):
        names.insert(1, "created")
    blocks: list[Block] = [fields_table(answer, names, "episode")]
    if isinstance(answer, EpisodePublic):
        blocks.append(fact_table(answer.facts, "facts"))
        blocks += _more("facts", answer.next_cursor)
    return blocks


@view.register
def _deleted(answer: DeleteResult) -> list[Block]:
    return [fields_table(answer, ("episode_id", "facts_removed", "facts_restored"))]


@view.register
def _schema(answer: MemorySchema) -> list[Block]:
    types = [[t.name, t.description or ""] for t in answer.entity_types]
    predicates = [
        [
            p.name,
            cell(p.value_type),
            cell(p.object_type),
            p.effective_cardinality.value,
            p.memory_type,
            p.description or "",
        ]
        for p in answer.predicates
    ]
    return [
        fields_table(answer, ("version", "mode"), "schema"),
        Table(("entity_type", "description"), types, "entity types"),
        Table(
            ("predicate", "value_type", "object_type", "cardinality", "memory_type", "description"),
            predicates,
            "predicates",
        ),
    ]


# -- writers ---------------------------------------------------------------------------
def plain_table(table: Table) -> list[str]:
    widths = [len(c) for c in table.columns]
    for row in table.rows:
        widths = [max(w, len(v)) for w, v in zip(widths, row, strict=True)]
    lines = [f"{table.title}:"] if table.title else []
    for row in [list(table.columns), *table.rows]:
        lines.append("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip())
    if not table.rows:
        lines.append("(none)")
    return lines


def write(blocks: Sequence[Block], out: TextIO, err: TextIO, *, terminal: bool) -> None:
    """Draw blocks: rich tables on a terminal, plain aligned text otherwise."""
    console = Console(file=out, force_terminal=True) if terminal else None
    first = True
    for block in blocks:
        if isinstance(block, Note):
            print(block.text, file=err)
            continue
        if not first:
            print(file=out)
        first = False
        if console is None:
            text = block if isinstance(block, str) else "\n".join(plain_table(block))
            print(text, file=out)
        elif isinstance(block, str):
            console.print(block, markup=False, highlight=False)
        else:
            console.print(_rich(block))


def _rich(table: Table) -> RichTable:
    t = RichTable(title=table.title, title_justify="left", header_style="bold", box=box.ROUNDED)
    for c in table.columns:
        # Timestamps stay whole on a narrow terminal; ids and text fold instead.
        t.add_column(c, overflow="fold", no_wrap=c.endswith(("_from", "_to", "_at")))
    for row in table.rows:
        t.add_row(*row)
    return t
