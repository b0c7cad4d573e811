"""The documentation, checked against the code so that the two cannot drift apart.

- docs/api.md has one ``#### `METHOD /path` `` heading per operation of /openapi.json, and
  no other;
- docs/operations.md names every ``SGAM_*`` variable the code reads (the settings models,
  and the names the sources and the Neo4j launcher read directly);
- the JSON examples of docs/schema.md and docs/extraction.md are accepted by the API and
  do what the text around them says;
- examples/scenarios/README.md describes every step kind the replay runner accepts, and
  the example scenarios pass;
- relative links and their #anchors resolve, and nothing points outside the repository.
"""

from __future__ import annotations

import ast
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.replay import STEP_KINDS, ServiceBackend, replay
from api.settings import Settings
from extraction.settings import ExtractionSettings
from graph.service import MemoryService
from graph.stores import open_store
from tests.conftest import ROOT, SCENARIOS

DOCS = ROOT / "docs"
HTTP_METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}
OPERATION = re.compile(r"^#### `([A-Z]+) (/\S*)`$", re.MULTILINE)
EXAMPLE = re.compile(r"<!-- example: ([\w-]+) -->\s*```json\n(.*?)```", re.DOTALL)
ENV_NAME = re.compile(r"^SGAM_[A-Z0-9_]+$")
TENANT = "docs"


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    """The app on a fresh SQLite file, open (no keys), no background workers."""
    app = create_app(Settings(store_url=f"sqlite:///{tmp_path}/docs.db", workers=0))
    with TestClient(app) as c:
        yield c


def doc_example(doc: str, name: str) -> Any:
    found = dict(EXAMPLE.findall((DOCS / doc).read_text(encoding="utf-8")))
    assert name in found, f"docs/{doc} has no <!-- example: {name} --> JSON block"
    return json.loads(found[name])


# -- docs/api.md ---------------------------------------------------------------------------
def test_the_api_reference_documents_exactly_the_operations_served(client: TestClient) -> None:
    headings = OPERATION.findall((DOCS / "api.md").read_text(encoding="utf-8"))
    documented = set(headings)
    assert len(headings) == len(documented), "docs/api.md documents an operation twice"
    paths = client.get("/openapi.json").json()["paths"]
    served = {(m.upper(), p) for p, item in paths.items() for m in item if m in HTTP_METHODS}
    assert len(served) > 20  # the parse found the operations, not nothing
    missing = sorted(f"{m} {p}" for m, p in served - documented)
    stale = sorted(f"{m} {p}" for m, p in documented - served)
    assert (missing, stale) == ([], []), (
        f"docs/api.md has no '#### `METHOD /path`' section for: {missing}; "
        f"it documents operations the app does not serve: {stale}"
    )


# -- docs/operations.md --------------------------------------------------------------------
def _string_constants(path: Path) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value


def env_names_read() -> dict[str, str]:
    """Every SGAM_* name the code reads → where it was found."""
    found: dict[str, str] = {}
    for model in (Settings, ExtractionSettings):
        assert model.model_config.get("env_prefix") == "SGAM_"
        for field in model.model_fields:
            found.setdefault(f"SGAM_{field.upper()}", f"{model.__name__}.{field}")
    for package in ("api", "extraction", "graph"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for text in _string_constants(path):
                if ENV_NAME.match(text):
                    found.setdefault(text, str(path.relative_to(ROOT)))
    launcher = ROOT / "tools" / "neo4j" / "neo4j.sh"
    for name in re.findall(r"\bSGAM_[A-Z0-9_]+", launcher.read_text(encoding="utf-8")):
        found.setdefault(name, str(launcher.relative_to(ROOT)))
    read_env = re.compile(r"""(?:environ\.get|getenv|environ\[)\(?\s*["'](SGAM_[A-Z0-9_]+)["']""")
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for name in read_env.findall(path.read_text(encoding="utf-8")):
            found.setdefault(name, str(path.relative_to(ROOT)))
    return found


def test_the_operations_guide_names_every_setting() -> None:
    names = env_names_read()
    # The collection itself works: fields of both models, direct reads, the launcher.
    assert {"SGAM_STORE_URL", "SGAM_LLM_MODEL", "SGAM_NEO4J_USER", "SGAM_NEO4J_PORT"} <= set(names)
    text = (DOCS / "operations.md").read_text(encoding="utf-8")
    missing = sorted(f"{n} (read by {where})" for n, where in names.items() if f"`{n}`" not in text)
    assert not missing, f"docs/operations.md does not name: {missing}"


# -- docs/schema.md and docs/extraction.md -------------------------------------------------
def _episode(client: TestClient, episode_id: str) -> None:
    r = client.post(
        f"/v1/tenants/{TENANT}/episodes",
        json={"episode_id": episode_id, "occurred_at": "2026-06-01T09:00:00Z", "content": "x"},
    )
    assert r.status_code == 201, r.text


def _fact(client: TestClient, **fact: Any) -> Any:
    body = {"facts": [{"valid_from": "2026-06-01T09:00:00Z", "source_episode_id": "e1", **fact}]}
    return client.post(f"/v1/tenants/{TENANT}/facts", json=body)


def test_the_schema_example_is_accepted_and_behaves_as_described(client: TestClient) -> None:
    body = doc_example("schema.md", "schema")
    r = client.put(f"/v1/tenants/{TENANT}/schema", json=body)
    assert r.status_code == 200, r.text
    stored = r.json()
    assert stored["version"] == 1
    assert stored["mode"] == "strict"
    assert [p["name"] for p in stored["predicates"]] == [p["name"] for p in body["predicates"]]
    assert stored["event_mappings"] == body["event_mappings"]

    _episode(client, "e1")
    ok = _fact(
        client,
        subject="mira",
        subject_type="Person",
        predicate="passport_deadline",
        value="2026-07-15",
    )
    assert ok.status_code == 201, ok.text
    assert ok.json()["facts"][0]["value_type"] == "date"
    assert ok.json()["facts"][0]["memory_type"] == "profile"
    bad = _fact(client, subject="mira", predicate="passport_deadline", value="July 15")
    assert bad.status_code == 422
    assert "expected a date YYYY-MM-DD" in bad.json()["detail"]
    unknown = _fact(client, subject="mira", predicate="favourite_colour", value="blue")
    assert unknown.status_code == 422
    assert "unknown predicate 'favourite_colour' (schema is strict)" in unknown.json()["detail"]
    number = _fact(
        client, subject="acct-1", subject_type="Account", predicate="credit_limit", value="250000"
    )
    assert number.status_code == 201, number.text
    assert number.json()["facts"][0]["value"] == 250000
    assert number.json()["facts"][0]["retention_policy"] == "seven_years"


def test_the_event_mapping_example_maps_as_described(client: TestClient) -> None:
    r = client.put(
        f"/v1/tenants/{TENANT}/schema", json=doc_example("extraction.md", "event-schema")
    )
    assert r.status_code == 200, r.text
    episode = {**doc_example("extraction.md", "event-episode"), "extract": "sync"}
    r = client.post(f"/v1/tenants/{TENANT}/episodes", json=episode)
    assert r.status_code == 201, r.text
    answer = r.json()
    assert answer["status"] == "extracted", answer
    facts = {
        (f["subject"], f["predicate"], f["object"] or f["value"], f["valid_from"])
        for f in answer["facts"]
    }
    assert facts == {
        ("cust-7", "holds_account", "acct-1", "2026-01-15T09:30:00Z"),
        ("acct-1", "account_status", "open", "2026-01-15T09:30:00Z"),
        ("cust-7", "segment", "retail", "2026-01-15T09:30:00Z"),
    }


# -- examples/scenarios --------------------------------------------------------------------
def test_the_scenario_format_describes_every_step_kind() -> None:
    text = (SCENARIOS / "README.md").read_text(encoding="utf-8")
    missing = sorted(k for k in STEP_KINDS if f'`{{"{k}"' not in text)
    assert not missing, f"examples/scenarios/README.md does not describe steps {missing}"
    used = {
        k for step in json.loads((SCENARIOS / "accounts.json").read_text())["steps"] for k in step
    }
    assert used >= STEP_KINDS, f"accounts.json no longer uses {sorted(STEP_KINDS - used)}"


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.json")), ids=lambda p: p.stem)
def test_the_example_scenarios_pass(path: Path, tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path}/{path.stem}.db")
    out = io.StringIO()
    try:
        code = replay(path, ServiceBackend(MemoryService(store)), out)
    finally:
        store.close()
    assert code == 0, out.getvalue()
    assert "PASS: 0 failed expectation(s)" in out.getvalue()


# -- links ---------------------------------------------------------------------------------
MARKDOWN = sorted(
    {
        ROOT / "README.md",
        ROOT / "bench" / "README.md",
        ROOT / "tools" / "neo4j" / "README.md",
        *DOCS.glob("*.md"),
        *(ROOT / "examples").rglob("*.md"),
    }
)
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} +(.+?) *$", re.MULTILINE)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for heading in HEADING.findall(FENCE.sub("", path.read_text(encoding="utf-8"))):
        s = slug(heading)
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else f"{s}-{n}")
    return out


def test_slugs_follow_github() -> None:
    assert slug("### `GET /v1/tenants/{tenant}/facts`".lstrip("# ")) == "get-v1tenantstenantfacts"
    assert slug("LLM extractor (`extraction/llm.py`)") == "llm-extractor-extractionllmpy"
    assert slug("Validation, resolution, policy") == "validation-resolution-policy"


def test_relative_links_and_anchors_resolve() -> None:
    broken = []
    for md in MARKDOWN:
        text = CODE_SPAN.sub("", FENCE.sub("", md.read_text(encoding="utf-8")))
        for target in LINK.findall(text):
            if re.match(r"^[a-z][a-z+.-]*:", target):  # https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            dest = (md.parent / path).resolve() if path else md
            where = f"{md.relative_to(ROOT)}: {target}"
            if not dest.exists():
                broken.append(f"{where} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                broken.append(f"{where} (no such heading)")
    assert not broken, f"broken links: {broken}"


def test_nothing_points_outside_the_repository() -> None:
    """A clone must stand on its own: no path into the team's folder beside the repository."""
    needles = ("../" + "shared", "/work/" + "shared")
    scanned = [
        ROOT / name
        for name in ("README.md", "Makefile", "pyproject.toml", "Dockerfile", "docker-compose.yml")
    ]
    for folder in ("api", "extraction", "graph", "cypher", "tests", "docs", "examples", "bench"):
        scanned += [
            p for p in (ROOT / folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts
        ]
    scanned += [p for p in (ROOT / "scripts").rglob("*") if p.is_file()]
    scanned += [p for p in (ROOT / "tools").rglob("*") if p.is_file() and "target" not in p.parts]
    offenders = []
    for path in scanned:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        offenders += [f"{path.relative_to(ROOT)}: {n}" for n in needles if n in text]
    assert len(scanned) > 100
    assert not offenders, f"references outside the repository: {offenders}"
