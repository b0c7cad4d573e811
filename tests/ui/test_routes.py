"""The explorer's routes over HTTP, no browser: pages, static files, /docs, package data."""

from __future__ import annotations

import fnmatch
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.settings import Settings
from api.ui.routes import STATIC
from tests.ui.seed import ROOT


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    app = create_app(Settings(store_url=f"sqlite:///{tmp_path / 'ui.db'}"))
    with TestClient(app) as c:
        yield c


@pytest.mark.parametrize(
    "path",
    ["/ui", "/ui/tenants/acme", "/ui/tenants/acme/entities/mira", "/ui/tenants/x/entities/a%20b"],
)
def test_pages_are_the_shell_with_a_strict_policy(client: TestClient, path: str) -> None:
    r = client.get(path)
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/html")
    csp = r.headers["content-security-policy"]
    assert "script-src 'self'" in csp
    assert "connect-src 'self'" in csp
    assert r.headers["referrer-policy"] == "no-referrer"
    assert '<script type="module" src="/ui/static/js/app.js">' in r.text
    assert "{{root}}" not in r.text


def test_pages_follow_the_root_path(tmp_path: Path) -> None:
    app = create_app(Settings(store_url=f"sqlite:///{tmp_path / 'ui.db'}"))
    with TestClient(app, root_path="/mem") as c:
        page = c.get("/ui").text
    assert 'src="/mem/ui/static/js/app.js"' in page
    assert 'data-root="/mem"' in page


def test_static_files_are_served_from_the_package_listing_only(client: TestClient) -> None:
    js = client.get("/ui/static/js/app.js")
    assert js.status_code == 200
    assert js.headers["content-type"].startswith("text/javascript")
    assert js.headers["x-content-type-options"] == "nosniff"
    assert "export" in js.text or "import" in js.text
    assert client.get("/ui/static/style.css").headers["content-type"].startswith("text/css")
    cy = client.get("/ui/static/vendor/cytoscape/cytoscape.min.js")
    assert cy.status_code == 200
    assert "Cytoscape Consortium" in cy.text[:300]
    assert "MIT" in client.get("/ui/static/vendor/VENDORED.md").text
    for bad in ("nope.js", "../routes.py", "%2e%2e/routes.py", "js/../../routes.py", ""):
        r = client.get(f"/ui/static/{bad}")
        assert r.status_code == 404, bad
        assert r.headers["content-type"].startswith("application/problem+json")


def test_docs_use_the_vendored_swagger_ui(client: TestClient) -> None:
    r = client.get("/docs")
    assert r.status_code == 200
    assert "/ui/static/vendor/swagger-ui/swagger-ui-bundle.js" in r.text
    assert "/ui/static/vendor/swagger-ui/swagger-ui.css" in r.text
    assert "cdn" not in r.text.lower()
    assert '"validatorUrl": null' in r.text
    bundle = client.get("/ui/static/vendor/swagger-ui/swagger-ui-bundle.js")
    assert bundle.status_code == 200
    assert bundle.headers["content-type"].startswith("text/javascript")
    # The explorer and the docs are no part of the API's own description.
    paths = client.get("/openapi.json").json()["paths"]
    assert not [p for p in paths if p.startswith(("/ui", "/docs"))]


def test_every_static_file_is_package_data_and_every_vendored_one_is_licensed() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "api.ui" in config["tool"]["setuptools"]["packages"]
    globs = config["tool"]["setuptools"]["package-data"]["api.ui"]
    base = STATIC.parent
    files = [p.relative_to(base).as_posix() for p in STATIC.rglob("*") if p.is_file()]
    assert len(files) > 10

    # setuptools globs do not cross "/": each file must match one glob segment for segment.
    def matched(f: str) -> bool:
        return any(g.count("/") == f.count("/") and fnmatch.fnmatchcase(f, g) for g in globs)

    assert [f for f in files if not matched(f)] == []
    vendor = STATIC / "vendor"
    for folder in (p for p in vendor.iterdir() if p.is_dir()):
        assert (folder / "LICENSE").is_file(), folder
        assert folder.name in (vendor / "VENDORED.md").read_text(encoding="utf-8")
