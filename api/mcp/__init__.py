"""sgam as an MCP server: ten tools over the service layer, on stdio or streamable HTTP.

- :func:`run_stdio` is ``sgam mcp --store URL --tenant T`` (one tenant per process);
- :class:`McpHttp` is the ``/mcp`` endpoint of ``sgam serve`` (the bearer key chooses the
  tenant, as on REST); :func:`api.app.create_app` mounts it and runs it in its lifespan.

See docs/mcp.md for client configuration and the tools.
"""

from api.mcp.http import McpHttp, choose_tenant
from api.mcp.server import INSTRUCTIONS, SgamMcp
from api.mcp.stdio import run_stdio
from api.mcp.tools import TOOL_NAMES, TOOLS, Services, ToolSpec

__all__ = [
    "INSTRUCTIONS",
    "TOOLS",
    "TOOL_NAMES",
    "McpHttp",
    "Services",
    "SgamMcp",
    "ToolSpec",
    "choose_tenant",
    "run_stdio",
]
