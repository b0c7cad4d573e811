"""Bulk import and export of JSON Lines (``docs/import-export.md``).

:mod:`.importer` streams REST request bodies into a store or a server;
:mod:`.exporter` streams current facts, every version or the whole ledger out;
``import --restore`` reads a ledger export back (:func:`.exporter.restore`).
"""

from api.transfer.exporter import ExportKind, export, restore
from api.transfer.importer import (
    MAX_LINE_BYTES,
    HttpSink,
    ImportReport,
    ServiceSink,
    import_lines,
)

__all__ = [
    "MAX_LINE_BYTES",
    "ExportKind",
    "HttpSink",
    "ImportReport",
    "ServiceSink",
    "export",
    "import_lines",
    "restore",
]
