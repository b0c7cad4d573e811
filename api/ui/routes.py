"""Routes of the explorer: one HTML shell for every page, its static files, and ``/docs``.

The shell is the same for every page; the ES modules read the tenant and entity from the
address and ask the REST API, so a foreign or unknown tenant gets exactly the API's
not-found. Static files are served from a listing of the package's ``static/`` folder
taken once, so a request path is only ever a key into that listing (no path is built
from it). Pages carry a strict Content-Security-Policy: scripts only from this server.
"""

from __future__ import annotations

import html
from functools import cache
from pathlib import Path, PurePosixPath

from fastapi import APIRouter, FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse

from graph.errors import NotFoundError

STATIC = Path(__file__).resolve().parent / "static"
STATIC_PREFIX = "/ui/static"
SWAGGER = f"{STATIC_PREFIX}/vendor/swagger-ui"

MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".png": "image/png",
    ".svg": "image/svg+xml",
    ".md": "text/plain; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
}
TEXT = "text/plain; charset=utf-8"  # LICENSE, NOTICE

# Scripts and data only from this server; Swagger UI's page (an inline bootstrap script)
# is served without it.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
PAGE_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    # Addresses name tenants and entities: do not hand them to other sites.
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}

router = APIRouter(include_in_schema=False)


@cache
def _files() -> dict[str, Path]:
    """Every static file by its URL path below ``/ui/static/``."""
    return {p.relative_to(STATIC).as_posix(): p for p in sorted(STATIC.rglob("*")) if p.is_file()}


@cache
def _shell_template() -> str:
    return (STATIC / "index.html").read_text(encoding="utf-8")


def _root(request: Request) -> str:
    root = request.scope.get("root_path", "")
    return root if isinstance(root, str) else ""


def _shell(request: Request) -> HTMLResponse:
    # The root path (behind a proxy prefix) is the only value put into the page.
    page = _shell_template().replace("{{root}}", html.escape(_root(request), quote=True))
    return HTMLResponse(page, headers=PAGE_HEADERS)


@router.get("/ui")
def home(request: Request) -> HTMLResponse:
    return _shell(request)


@router.get("/ui/tenants/{tenant}")
def tenant_page(request: Request, tenant: str) -> HTMLResponse:
    return _shell(request)


@router.get("/ui/tenants/{tenant}/entities/{entity_id}")
def entity_page(request: Request, tenant: str, entity_id: str) -> HTMLResponse:
    return _shell(request)


@router.get(STATIC_PREFIX + "/{path:path}")
def static_file(path: str) -> FileResponse:
    found = _files().get(path)
    if found is None:
        raise NotFoundError("file", path)
    media = MEDIA_TYPES.get(PurePosixPath(path).suffix, TEXT)
    return FileResponse(
        found,
        media_type=media,
        headers={"X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache"},
    )


@router.get("/docs")
def docs(request: Request) -> HTMLResponse:
    """Swagger UI from the vendored bundle instead of FastAPI's default CDN."""
    root = _root(request)
    return get_swagger_ui_html(
        openapi_url=root + (request.app.openapi_url or "/openapi.json"),
        title=f"{request.app.title} — API",
        swagger_js_url=f"{root}{SWAGGER}/swagger-ui-bundle.js",
        swagger_css_url=f"{root}{SWAGGER}/swagger-ui.css",
        swagger_favicon_url=f"{root}{SWAGGER}/favicon-32x32.png",
        # No badge fetched from the public validator: offline means offline.
        swagger_ui_parameters={"validatorUrl": None},
    )


def install(app: FastAPI) -> None:
    """Serve the explorer at ``/ui`` and the OpenAPI page at ``/docs`` (create the app
    with ``docs_url=None`` so FastAPI's CDN-backed page is not registered too)."""
    app.include_router(router)
