"""API keys: 401 without a valid key, 404 for other tenants, admin keys, open mode, and the
refusal to serve an open API beyond loopback."""

from __future__ import annotations

import subprocess
import sys

import pydantic
import pytest
from fastapi.testclient import TestClient

from api.auth import KeyRing
from api.server import ServeRefused, check_bind, is_loopback
from api.settings import Settings, parse_api_keys
from graph.model import valid_tenant
from tests.api.conftest import AppFactory
from tests.api.helpers import episode, problem
from tests.conftest import ROOT


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_settings_parse_keys_and_env(monkeypatch: pytest.MonkeyPatch) -> None:
    keys = parse_api_keys(" acme:k1, beta:k2 ,*:root,")
    assert [(k.tenant, k.key.get_secret_value(), k.admin) for k in keys] == [
        ("acme", "k1", False),
        ("beta", "k2", False),
        ("*", "root", True),
    ]
    for bad in ("acme", "acme:", "Not A Tenant:k"):
        with pytest.raises(pydantic.ValidationError):
            Settings(api_keys=bad)
    monkeypatch.setenv("SGAM_API_KEYS", "acme:k1")
    monkeypatch.setenv("SGAM_STORE_URL", "sqlite:////tmp/x.db")
    monkeypatch.setenv("SGAM_PORT", "9090")
    s = Settings()
    assert [k.tenant for k in s.api_keys] == ["acme"]
    assert (s.store_url, s.port, s.host, s.max_body_bytes) == (
        "sqlite:////tmp/x.db",
        9090,
        "127.0.0.1",
        1024 * 1024,
    )
    assert "k1" not in repr(s)  # secrets stay out of logs


def test_keyring_matches_over_all_keys() -> None:
    ring = KeyRing(parse_api_keys("acme:same-length-1,beta:same-length-2,*:root"))
    assert ring.authenticate("Bearer same-length-2").tenant == "beta"
    assert ring.authenticate("bearer   root").admin
    assert KeyRing([]).authenticate(None).admin  # open


def test_missing_or_unknown_key_is_401(make_app: AppFactory, tenant: str) -> None:
    app = make_app(api_keys=f"{tenant}:k-a")
    base = f"/v1/tenants/{tenant}"
    with TestClient(app) as client:
        for headers in (
            {},
            {"Authorization": "Basic k-a"},
            _bearer("k-b"),
            _bearer(""),
            {"Authorization": "Bearer"},
        ):
            for r in (
                client.get(f"{base}/facts", headers=headers),
                client.post(f"{base}/episodes", json=episode("e1"), headers=headers),
                client.post(f"{base}/facts", content=b"{broken", headers=headers),
            ):
                problem(r, 401)
                assert r.headers["www-authenticate"].startswith("Bearer")
        problem(client.get(f"{base}/episodes/e1", headers=_bearer("k-a")), 404)  # nothing stored
        assert client.get(f"{base}/facts", headers=_bearer("k-a")).status_code == 200
        # Probes and metrics need no key.
        assert client.get("/healthz").status_code == 200
        assert client.get("/readyz").status_code == 200
        assert client.get("/metrics").status_code == 200


def test_tenant_key_sees_only_its_tenant(
    make_app: AppFactory, tenant: str, other_tenant: str
) -> None:
    app = make_app(api_keys=f"{tenant}:k-a,{other_tenant}:k-b,*:root")
    a, b = f"/v1/tenants/{tenant}", f"/v1/tenants/{other_tenant}"
    with TestClient(app) as client:
        assert (
            client.post(f"{b}/episodes", json=episode("eb"), headers=_bearer("k-b")).status_code
            == 201
        )
        foreign = problem(client.get(f"{b}/episodes/eb", headers=_bearer("k-a")), 404)
        missing = problem(
            client.get("/v1/tenants/no-such-tenant/episodes/eb", headers=_bearer("k-a")), 404
        )
        assert foreign["detail"].replace(other_tenant, "T") == missing["detail"].replace(
            "no-such-tenant", "T"
        )
        # An invalid tenant id answers the same.
        problem(client.get("/v1/tenants/NOT_VALID/facts", headers=_bearer("k-a")), 404)
        # Admin reaches both.
        assert client.get(f"{b}/episodes/eb", headers=_bearer("root")).status_code == 200
        assert client.get(f"{a}/facts", headers=_bearer("root")).status_code == 200
        assert client.get(f"{a}/facts", headers=_bearer("k-a")).status_code == 200


def test_open_server_admits_every_tenant(client: TestClient, tenant: str) -> None:
    r = client.post(f"/v1/tenants/{tenant}/episodes", json=episode("e1"))
    assert r.status_code == 201
    problem(client.get("/v1/tenants/Bad!/facts"), 404)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.1.2.3", False),
        ("no-such-host.invalid", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_open_server_refuses_non_loopback() -> None:
    with pytest.raises(ServeRefused, match=r"refusing to listen on '0\.0\.0\.0'"):
        check_bind(Settings(host="0.0.0.0"))
    check_bind(Settings(host="0.0.0.0", api_keys="acme:k"))  # keys configured: allowed
    check_bind(Settings(host="127.0.0.1"))


def test_serve_exits_nonzero_on_refusal(tmp_path: object) -> None:
    code = (
        "from api.server import serve\n"
        "from api.settings import Settings\n"
        "serve(Settings(host='0.0.0.0', port=0))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"PATH": "/usr/bin:/bin", "SGAM_API_KEYS": ""},
    )
    assert out.returncode == 1
    assert "refusing to listen on '0.0.0.0' with no API keys configured" in out.stderr
    assert "Traceback" not in out.stderr


SECRETS = ("s3cret-one", "s3cret-two", "s3cret-three", "s3cret.four")


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        ("acme:s3cret-one,s3cret-two", "pair 2 has no ':'"),
        ("acme:s3cret-one,beta:", "pair 2 (tenant 'beta') has an empty key"),
        ("acme:s3cret-one,s3cret.four:beta", "pair 2: its tenant is not a valid tenant id"),
        ("acme:s3cret-one,,ACME:s3cret-three", "pair 3: its tenant is not a valid tenant id"),
    ],
)
def test_malformed_api_keys_never_show_a_key(raw: str, where: str) -> None:
    """Review M7: the startup error printed the whole SGAM_API_KEYS, keys included."""
    with pytest.raises(pydantic.ValidationError) as info:
        Settings(api_keys=raw)
    message = str(info.value)
    assert where in message
    assert not any(s in message for s in SECRETS), message


def test_serve_with_malformed_keys_prints_no_key() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "api.cli", "serve", "--port", "0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,  # a guard, not a timing: imports are slow on a busy machine
        check=False,
        env={"PATH": "/usr/bin:/bin", "SGAM_API_KEYS": "acme:s3cret-one,s3cret-two"},
    )
    assert out.returncode != 0
    assert "pair 2 has no ':'" in out.stderr
    assert not any(s in out.stderr + out.stdout for s in SECRETS), out.stderr


@pytest.mark.parametrize("path_tenant", ["acme%0A", "acme%0a", "%0Aacme"])
def test_tenant_with_a_newline_is_no_tenant(make_app: AppFactory, path_tenant: str) -> None:
    """Review L1: "acme\\n" passed the tenant check (re's "$" matches before a final
    newline): the admin key got a 422 where every other path answers 404."""
    assert not valid_tenant("acme\n")
    assert valid_tenant("acme")
    with TestClient(make_app(api_keys="acme:k-a,*:root")) as client:
        for key in ("root", "k-a"):
            r = client.get(f"/v1/tenants/{path_tenant}/facts", headers=_bearer(key))
            assert problem(r, 404)["title"] == "Not found"
    with TestClient(make_app()) as client:  # open server
        problem(client.get(f"/v1/tenants/{path_tenant}/facts"), 404)
