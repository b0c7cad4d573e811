"""sgam's core: the domain model, the temporal core, the ledger, the storage port and stores.

Import from here; the submodules are implementation detail and may move.
"""

from graph.errors import (
    ConflictError,
    FactConflictError,
    ItemError,
    LeaseLostError,
    NotFoundError,
    SgamError,
    StoreFailedError,
    StoreUnavailableError,
    TemplateError,
    TransientStoreError,
    ValidationError,
)
from graph.model import (
    Cardinality,
    ConflictPolicy,
    DeleteResult,
    Direction,
    Entity,
    Episode,
    EpisodeCreate,
    EpisodeKind,
    EpisodeStatus,
    ExtractMode,
    Fact,
    FactQuery,
    MemoryDelta,
    Neighborhood,
    ValueType,
    WriteResult,
    WriteStatus,
)
from graph.port import LedgerTx, Store
from graph.schema import PERMISSIVE, EntityTypeSpec, MemorySchema, PredicateSpec, load_schema
from graph.service import MemoryService
from graph.stores import DEFAULT_STORE_URL, open_store

__all__ = [
    "DEFAULT_STORE_URL",
    "PERMISSIVE",
    "Cardinality",
    "ConflictError",
    "ConflictPolicy",
    "DeleteResult",
    "Direction",
    "Entity",
    "EntityTypeSpec",
    "Episode",
    "EpisodeCreate",
    "EpisodeKind",
    "EpisodeStatus",
    "ExtractMode",
    "Fact",
    "FactConflictError",
    "FactQuery",
    "ItemError",
    "LeaseLostError",
    "LedgerTx",
    "MemoryDelta",
    "MemorySchema",
    "MemoryService",
    "Neighborhood",
    "NotFoundError",
    "PredicateSpec",
    "SgamError",
    "Store",
    "StoreFailedError",
    "StoreUnavailableError",
    "TemplateError",
    "TransientStoreError",
    "ValidationError",
    "ValueType",
    "WriteResult",
    "WriteStatus",
    "load_schema",
    "open_store",
]
