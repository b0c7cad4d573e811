"""Fixtures of the CLI suite: ``sgam`` run through ``main(argv)``, and a memory holding the
Mira scenario, reached in-process (``--store``, a SQLite file) or through a server on
loopback (``--api``, with a key for the test's tenant)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from api.cli import main
from api.client import SgamClient, SyncClient
from api.local import LocalClient
from api.server import running
from api.settings import Settings
from graph.port import Store
from tests.conftest import ROOT

MIRA = ROOT / "examples" / "scenarios" / "mira.json"
FACT_COLUMNS = ("fact_id", "subject", "predicate", "value", "valid_from", "valid_to", "source")


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> object:
        assert self.code == 0, self.err
        return json.loads(self.out)


Sgam = Callable[..., Result]


@pytest.fixture
def sgam(capsys: pytest.CaptureFixture[str]) -> Sgam:
    """Run the command line in this process; its exit status and what it printed."""
    capsys.readouterr()

    def run(*argv: str) -> Result:
        code = main(list(argv))
        out, err = capsys.readouterr()
        return Result(code, out, err)

    return run


def scenario(tmp_path: Path, tenant: str) -> Path:
    """The Mira scenario, for the test's tenant."""
    data = json.loads(MIRA.read_text(encoding="utf-8"))
    data["tenant"] = tenant
    path = tmp_path / "mira.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def relations(client: SyncClient, tenant: str) -> None:
    """Two relations beside Mira's deadline: mira knows ann, ann works at initech."""
    client.write_facts(
        tenant,
        [
            {"subject": "mira", "predicate": "knows", "object": "ann", "source_episode_id": "e1"},
            {
                "subject": "ann",
                "predicate": "works_at",
                "object": "initech",
                "source_episode_id": "e1",
            },
        ],
    )


@dataclass
class Memory:
    """Where the scenario was replayed: the options that reach it, and its tenant."""

    where: list[str]
    tenant: str

    def args(self, *argv: str) -> list[str]:
        return [*argv, *self.where, "--tenant", self.tenant]


@contextmanager
def _in_process(tmp_path: Path, tenant: str, sgam: Sgam) -> Iterator[Memory]:
    where = ["--store", f"sqlite:///{tmp_path}/cli.db"]
    replayed = sgam("replay", str(scenario(tmp_path, tenant)), *where)
    assert replayed.code == 0, replayed.out + replayed.err
    with LocalClient.open(where[1]) as client:
        relations(client, tenant)
    yield Memory(where, tenant)


@contextmanager
def _over_http(store: Store, tmp_path: Path, tenant: str, sgam: Sgam) -> Iterator[Memory]:
    settings = Settings(port=0, api_keys=f"{tenant}:k1", log_level="warning", workers=0)
    with running(settings, store=store) as url:
        where = ["--api", url, "--key", "k1"]
        replayed = sgam("replay", str(scenario(tmp_path, tenant)), *where)
        assert replayed.code == 0, replayed.out + replayed.err
        with SgamClient(url, "k1") as client:
            relations(client, tenant)
        yield Memory(where, tenant)


@pytest.fixture(params=["store", "api"])
def memory(
    request: pytest.FixtureRequest, tmp_path: Path, tenant: str, sgam: Sgam
) -> Iterator[Memory]:
    """Mira's scenario replayed with ``sgam replay``, plus :func:`relations`: in a SQLite
    file reached with ``--store``, then through a server reached with ``--api --key``."""
    if request.param == "store":
        with _in_process(tmp_path, tenant, sgam) as m:
            yield m
    else:
        store: Store = request.getfixturevalue("sqlite_store")
        with _over_http(store, tmp_path, tenant, sgam) as m:
            yield m


@pytest.fixture
def api_memory(sqlite_store: Store, tmp_path: Path, tenant: str, sgam: Sgam) -> Iterator[Memory]:
    """The same, through a server only."""
    with _over_http(sqlite_store, tmp_path, tenant, sgam) as m:
        yield m
