"""One router per resource; :func:`routers` lists what the app includes, in order.

The shared pieces of their OpenAPI (problem responses, time query parameters) are in
:mod:`api.routes.common`.
"""

from __future__ import annotations

from fastapi import APIRouter

from api.routes import entities, episodes, extraction, facts, health, schema, search, tenants


def routers() -> list[APIRouter]:
    return [
        health.router,
        episodes.router,
        facts.router,
        entities.router,
        schema.router,
        extraction.router,
        search.router,
        tenants.router,
    ]
