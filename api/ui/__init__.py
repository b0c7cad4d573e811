"""The memory explorer at ``/ui`` and the OpenAPI page at ``/docs``, served from package data.

Plain HTML, CSS and ES modules with no build step; the browser reads everything through
the public REST API with the user's key, so the pages themselves hold no data and need
no key. Third-party code (cytoscape.js, Swagger UI) is vendored with its licence under
``static/vendor/`` (versions in ``static/vendor/VENDORED.md``), so nothing loads from a
CDN and both pages work offline.
"""

from __future__ import annotations

from api.ui.routes import install

__all__ = ["install"]
