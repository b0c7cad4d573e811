"""The one Neo4j connection object that the store, its search and its queue share.

It holds the driver, the database name and the checked Cypher templates, and it is the
only place that calls the driver: :meth:`Neo4jConnection.run` runs every template (as its
own managed transaction, or inside an explicit one from :meth:`Neo4jConnection.transaction`).
Driver errors become the project's own here, in :func:`translated`,
always chained (``raise ... from e``):

- ``ServiceUnavailable``, ``SessionExpired``, ``AuthError``, a full connection pool, a
  ``DatabaseError`` (a server shutting down) → :class:`StoreUnavailableError`
- an unknown database (``SGAM_NEO4J_DATABASE``) → :class:`StoreUnavailableError` naming it
- ``TransientError`` (deadlocks, lock timeouts, leader switches) → :class:`TransientStoreError`
- ``ConstraintError`` → :class:`ConflictError`

Inside an explicit transaction, every error the driver calls retryable (a lost connection,
a leader switch) becomes :class:`TransientStoreError` too, so that the service runs the
whole transaction again (graph.service.MemoryService.in_transaction), as the driver's own
``execute_write`` would; managed calls (:meth:`Neo4jConnection.run` without ``tx``) are
retried by the driver itself.

Transactions, routing and bookmarks: a read template runs as a managed READ transaction
(routed to a reader of a cluster), a write template and every explicit transaction as a
WRITE one, always on the configured database. All of them share the driver's one
bookmark manager (``driver.execute_query_bookmark_manager``), so every read of this
process starts after every write it committed: a client's read after its write is
consistent even when the read goes to a secondary that has not caught up yet (it waits).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import neo4j
from neo4j import Driver, GraphDatabase, ManagedTransaction, RoutingControl, Transaction
from neo4j.exceptions import (
    AuthError,
    ClientError,
    ConnectionPoolError,
    ConstraintError,
    DatabaseError,
    DriverError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)

from graph.errors import ConflictError, StoreUnavailableError, TemplateError, TransientStoreError
from graph.stores.neo4j.templates import Template, load_templates, require
from graph.tracing import traced

DEFAULT_DATABASE = "neo4j"
DEFAULT_USER = "neo4j"
MANAGED_RETRY_SECONDS = 5.0
# Connecting (TCP, TLS and the Bolt handshake) and waiting for a pooled connection: the
# driver's defaults (30 s and 60 s; the handshake runs under the latter) held every request
# two minutes before its 503 when Neo4j accepted connections but did not answer (a frozen
# JVM, a proxy whose backend is gone), the managed retry included.
CONNECT_SECONDS = 5.0
DATABASE_NOT_FOUND = "Neo.ClientError.Database.DatabaseNotFound"
# An index that exists but is still being filled (GQL status 51N63; Neo4j 2026.x reports it
# under IndexNotFound): after an index is created or rebuilt, until population ends.
INDEX_NOT_READY = "51N63"

Row = dict[str, Any]
T = TypeVar("T")


def auth_from_env() -> tuple[str, str] | None:
    """SGAM_NEO4J_USER / SGAM_NEO4J_PASSWORD; the user defaults to ``neo4j`` when only a
    password is given (Neo4j's own default user). Neither set: no authentication."""
    user = os.environ.get("SGAM_NEO4J_USER") or None
    password = os.environ.get("SGAM_NEO4J_PASSWORD") or None
    if user is None and password is None:
        return None
    return (user or DEFAULT_USER, password or "")


def database_from_env() -> str:
    return os.environ.get("SGAM_NEO4J_DATABASE") or DEFAULT_DATABASE


def strip_credentials(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


@contextmanager
def translated(database: str, *, in_transaction: bool = False) -> Iterator[None]:
    """Driver errors → the project's errors, always chained (``raise ... from e``);
    ``in_transaction``: inside an explicit transaction (see the module docstring)."""
    try:
        yield
    except (Neo4jError, DriverError) as e:
        mapped = _mapped(e, database, in_transaction=in_transaction)
        if mapped is None:
            raise
        raise mapped from e


def _mapped(
    e: Neo4jError | DriverError, database: str, *, in_transaction: bool
) -> Exception | None:
    if isinstance(e, TransientError):
        # Deadlocks, lock timeouts, leader switches: the service runs the transaction again.
        return TransientStoreError(f"Neo4j transient error: {e}")
    if in_transaction and e.is_retryable():
        return TransientStoreError(f"Neo4j transaction interrupted, run it again: {e}")
    if isinstance(e, ServiceUnavailable | SessionExpired | AuthError | ConnectionPoolError):
        return StoreUnavailableError(f"Neo4j is unavailable: {e}")
    if isinstance(e, DatabaseError):
        # The server failed, not the request (e.g. a database that is shutting down).
        return StoreUnavailableError(f"Neo4j failed: {e}")
    if isinstance(e, ConstraintError):
        return ConflictError(f"constraint violated: {e}")
    if isinstance(e, ClientError) and getattr(e, "gql_status", None) == INDEX_NOT_READY:
        # Not the request's fault, and over once Neo4j has filled the index: 503.
        return StoreUnavailableError(f"a Neo4j index is still being built, retry later: {e}")
    if isinstance(e, ClientError) and e.code == DATABASE_NOT_FOUND:
        return StoreUnavailableError(
            f"Neo4j has no database {database!r}: set SGAM_NEO4J_DATABASE to one that"
            " exists (default 'neo4j')"
        )
    return None


class Neo4jConnection:
    """One driver and one database; every query of the store goes through :meth:`run`."""

    def __init__(
        self, driver: Driver, *, database: str = DEFAULT_DATABASE, user: str | None = None
    ) -> None:
        self.driver = driver
        self.database = database
        self.user = user  # who the driver authenticates as; None: no authentication
        self._templates: dict[str, Template] | None = None

    @classmethod
    def from_url(cls, url: str) -> Neo4jConnection:
        """Connect with :func:`auth_from_env` to SGAM_NEO4J_DATABASE (default ``neo4j``)."""
        database = database_from_env()
        auth = auth_from_env()
        with translated(database):
            # No server notifications: the templates read properties that are absent while
            # null (e.g. summary), which would log a warning on every call.
            driver = GraphDatabase.driver(
                url,
                auth=auth,
                notifications_min_severity="OFF",
                # Managed calls retry transient errors and lost connections this long; the
                # default 30 s would hold an API request that long before it answers 503.
                max_transaction_retry_time=MANAGED_RETRY_SECONDS,
                connection_timeout=CONNECT_SECONDS,
                connection_acquisition_timeout=CONNECT_SECONDS,
            )
        return cls(driver, database=database, user=auth[0] if auth else None)

    def translated(self, *, in_transaction: bool = False) -> AbstractContextManager[None]:
        return translated(self.database, in_transaction=in_transaction)

    # -- templates -------------------------------------------------------------------------
    @property
    def templates(self) -> dict[str, Template]:
        if self._templates is None:
            self._templates = load_templates()
        return self._templates

    def load_templates(self, required: set[str]) -> None:
        """Load and check every template now; fail when one the store runs is missing."""
        templates = load_templates()
        require(templates, required)
        self._templates = templates

    def _template(self, name: str, params: Mapping[str, Any]) -> Template:
        t = self.templates.get(name)
        if t is None:
            raise TemplateError(f"no Cypher template named {name!r}")
        if set(params) != t.params:
            raise TemplateError(
                f"{name} takes parameters {sorted(t.params)}, was given {sorted(params)}"
            )
        return t

    # -- the one place that runs queries ---------------------------------------------------
    @traced("store.query", args={"name": "db.operation.name"}, attrs={"db.system": "neo4j"})
    def run(
        self,
        name: str,
        params: Mapping[str, Any],
        *,
        tx: Transaction | ManagedTransaction | None = None,
        plain: bool = False,
    ) -> list[Row]:
        """Run one template: inside ``tx`` when given, else as its own managed transaction
        (routed READ or WRITE by the template's mode; the driver retries transient errors).
        Inside a managed read (:meth:`read`) driver errors are left to the driver, which
        retries the whole work on a retryable one; :meth:`read` translates the rest.

        ``plain``: the rows as the driver decoded them, for a template that returns no
        nodes, relationships or paths; ``Record.data()`` walks every nested value to convert
        those, which costs more than the query on the search's large nested rows."""
        t = self._template(name, params)
        rows: list[Row] = []
        managed = isinstance(tx, ManagedTransaction)
        if managed and t.mode != "read":
            raise TemplateError(f"{name} writes; it cannot run in a read transaction")
        errors = self.translated(in_transaction=tx is not None)
        with contextlib.nullcontext() if managed else errors:
            for statement, names in zip(t.statements, t.statement_params, strict=True):
                used = {k: params[k] for k in names}
                if tx is not None:
                    result = tx.run(statement, used)
                    rows = [dict(r) for r in result] if plain else result.data()
                else:
                    records, _, _ = self.driver.execute_query(
                        statement,
                        used,
                        database_=self.database,
                        routing_=RoutingControl.READ if t.mode == "read" else RoutingControl.WRITE,
                    )
                    rows = [dict(r) if plain else r.data() for r in records]
        return rows

    def read(self, work: Callable[[ManagedTransaction], T]) -> T:
        """Run ``work`` as one managed READ transaction (routed to a reader of a cluster,
        after every write of this process, run again whole on a transient error): several
        templates on one snapshot, for the price of one transaction."""
        with self.translated():
            session = self.driver.session(
                database=self.database,
                default_access_mode=neo4j.READ_ACCESS,
                bookmark_manager=self.driver.execute_query_bookmark_manager,
            )
            try:
                return session.execute_read(work)
            finally:
                session.close()

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """One explicit write transaction: commit on success, roll back on any exception."""
        with self.translated(in_transaction=True):
            session = self.driver.session(
                database=self.database,
                default_access_mode=neo4j.WRITE_ACCESS,
                # Share causal bookmarks with execute_query, so reads see our writes.
                bookmark_manager=self.driver.execute_query_bookmark_manager,
            )
        try:
            with self.translated(in_transaction=True):
                tx = session.begin_transaction()
            try:
                yield tx
            except BaseException:
                _rollback_quietly(tx)
                raise
            # Not retryable here: a commit whose outcome is unknown (IncompleteCommit) must
            # not run again, it answers 503.
            with self.translated():
                tx.commit()
        finally:
            session.close()

    def close(self) -> None:
        self.driver.close()


def _rollback_quietly(tx: Transaction) -> None:
    """Roll back after a failure; a broken connection must not hide the original error."""
    try:
        if not tx.closed():
            tx.rollback()
    except (neo4j.exceptions.Neo4jError, neo4j.exceptions.DriverError):
        pass


__all__ = [
    "DEFAULT_DATABASE",
    "Neo4jConnection",
    "Row",
    "auth_from_env",
    "database_from_env",
    "strip_credentials",
    "translated",
]
