"""``sgam schema get|put``: the tenant's memory schema."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

from api.cli.core import Exit, Failure, Target, memory_command
from graph.schema import MemorySchema

schema = typer.Typer(help="The tenant's memory schema: get, put.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(schema, name="schema")
    memory_command(schema, "get")(get)
    memory_command(schema, "put", creates=True)(put)


def get(t: Target) -> MemorySchema:
    """The schema in force; with --json, a document that `schema put` takes back.

    GET /v1/tenants/{tenant}/schema
    """
    return t.client.get_schema(t.tenant)


def _read(file: str) -> dict[str, Any]:
    try:
        text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
        data = yaml.safe_load(text)  # JSON is YAML: one parser reads both
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        raise Failure(Exit.USAGE, f"cannot read {file}: {e}") from None
    if not isinstance(data, dict):
        raise Failure(Exit.USAGE, f"{file} must hold a schema object (YAML or JSON)")
    return data


def put(
    t: Target,
    file: Annotated[str, typer.Argument(metavar="FILE", help="YAML or JSON; '-': stdin.")],
) -> MemorySchema:
    """Store a new schema version from FILE (YAML or JSON); the service numbers it.

    PUT /v1/tenants/{tenant}/schema
    """
    return t.client.put_schema(t.tenant, _read(file))
