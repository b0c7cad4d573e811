"""The ``sgam import`` and ``sgam export`` commands over :mod:`.importer` and
:mod:`.exporter`: open the store or the server, show progress, map outcomes to exit
codes (0 all written, 1 some lines refused, 2 unreadable input or no store, 3 the reject
file failed during the import, 130 interrupted)."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import datetime
from pathlib import Path
from typing import IO

from api.transfer.exporter import ExportKind, export, restore
from api.transfer.importer import (
    DEFAULT_BATCH,
    HttpSink,
    ImportReport,
    RejectFileFailed,
    ServiceSink,
    Sink,
    import_lines,
)
from graph.errors import SgamError
from graph.model import ConflictPolicy
from graph.port import Store
from graph.service import MemoryService
from graph.stores import open_store

DEFAULT_TENANT = "default"
REJECT_FILE_FAILED = 3  # exit status: the reject file could not be written mid-import


@contextmanager
def _progress(total: int | None, *, tty: bool) -> Iterator[Callable[[ImportReport], None]]:
    """A rich bar on a terminal (lines, facts/s, refused, ETA from the file size);
    nothing otherwise (the caller prints one summary line)."""
    if not tty:
        yield lambda _r: None
        return
    from rich.progress import (
        BarColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    start = time.perf_counter()
    columns = (
        TextColumn("{task.fields[lines]} lines"),
        BarColumn(),
        TextColumn("{task.fields[rate]} facts/s"),
        TextColumn("{task.fields[refused]} refused"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, transient=False) as bar:
        task = bar.add_task("import", total=total, lines=0, rate=0, refused=0)
        last = [0.0]

        def update(r: ImportReport) -> None:
            now = time.perf_counter()
            if now - last[0] < 0.1:
                return
            last[0] = now
            rate = int(r.facts / max(now - start, 1e-6))
            bar.update(task, completed=r.bytes_read, lines=r.lines, rate=rate, refused=r.refused)

        yield update


def run_import(
    source: str,
    *,
    store_url: str | None,
    api_url: str | None,
    key: str | None,
    tenant: str,
    batch: int = DEFAULT_BATCH,
    policy: ConflictPolicy | None = None,
    reject_file: str | None = None,
    restore_ledger: bool = False,
) -> int:
    try:
        stream: IO[bytes] = sys.stdin.buffer if source == "-" else open(source, "rb")  # noqa: SIM115
    except OSError as e:
        print(f"cannot read {source}: {e}", file=sys.stderr)
        return 2
    total = None if source == "-" else os.fstat(stream.fileno()).st_size
    try:
        if restore_ledger:
            return _restore(stream, store_url=store_url, api_url=api_url, tenant=tenant)
        # Its own message (the handler below speaks of the input), before any line is read.
        # Line-buffered: a record that cannot be written fails at its own line (not at a
        # later flush or the close), and an interrupted import leaves whole records.
        try:
            rejects = (
                open(reject_file, "w", encoding="utf-8", buffering=1)  # noqa: SIM115
                if reject_file
                else None
            )
        except OSError as e:
            print(f"cannot write the reject file {reject_file}: {e}", file=sys.stderr)
            return 2
        try:
            code = _import(
                stream,
                total,
                rejects,
                reject_file,
                store_url=store_url,
                api_url=api_url,
                key=key,
                tenant=tenant,
                batch=batch,
                policy=policy,
            )
        except BaseException:
            if rejects is not None:
                with suppress(OSError):  # the error under way is the one to report
                    rejects.close()
            raise
        return _close_rejects(rejects, reject_file, code)
    except OSError as e:
        print(f"cannot read {source}: {e}", file=sys.stderr)
        return 2
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


def _close_rejects(rejects: IO[str] | None, path: str | None, code: int) -> int:
    """Close the reject file; failing to, its records may be lost: the import's status
    is then :data:`REJECT_FILE_FAILED`, reported once."""
    if rejects is None:
        return code
    try:
        rejects.close()
    except OSError as e:
        if code != REJECT_FILE_FAILED:  # else the failed write was reported already
            print(f"cannot write the reject file {path}: {e}", file=sys.stderr)
        return REJECT_FILE_FAILED
    return code


def _import(
    stream: IO[bytes],
    total: int | None,
    rejects: IO[str] | None,
    reject_path: str | None,
    *,
    store_url: str | None,
    api_url: str | None,
    key: str | None,
    tenant: str,
    batch: int,
    policy: ConflictPolicy | None,
) -> int:
    sink: Sink
    closer: Callable[[], None]
    if api_url:
        from api.client import SgamClient

        client = SgamClient(api_url, api_key=key)
        sink, closer = HttpSink(client, tenant_id=tenant), client.close
    else:
        try:
            store = open_store(store_url)
        except SgamError as e:
            print(f"cannot open store: {e}", file=sys.stderr)
            return 2
        sink, closer = ServiceSink(MemoryService(store), tenant_id=tenant), store.close
    started = time.perf_counter()
    seen = [ImportReport()]  # the latest counts, for a summary if interrupted

    def track(r: ImportReport, show: Callable[[ImportReport], None]) -> None:
        seen[0] = r
        show(r)

    try:
        with _progress(total, tty=sys.stderr.isatty()) as progress:
            report = import_lines(
                stream,
                sink,
                rejects=rejects,
                batch=batch,
                policy=policy,
                progress=lambda r: track(r, progress),
            )
    except KeyboardInterrupt:
        # What was written is whole (every write is one transaction); the facts gathered
        # for the next batch were not written, and a re-run writes them.
        print(
            f"interrupted at line {seen[0].lines}: {seen[0].summary()};"
            " run the same command again to resume",
            file=sys.stderr,
        )
        return 130
    except RejectFileFailed as e:
        # Stopped: every later refusal would be lost too. What was written is whole.
        print(
            f"cannot write the reject file {reject_path}: {e.error}; the import stopped at"
            f" line {e.report.lines}, the record of refused line {e.line} is lost:"
            f" {e.report.summary()}; make room for the reject file (or name another)"
            " and run the same command again to resume",
            file=sys.stderr,
        )
        return REJECT_FILE_FAILED
    finally:
        closer()
    took = time.perf_counter() - started
    rate = report.facts / took if took > 0 else 0.0
    print(f"{report.summary()} in {took:.1f} s ({rate:,.0f} facts/s)", file=sys.stderr)
    return report.exit_code


def _restore(stream: IO[bytes], *, store_url: str | None, api_url: str | None, tenant: str) -> int:
    if api_url:
        print("--restore writes a store directly: use --store, not --api", file=sys.stderr)
        return 2
    try:
        store = open_store(store_url)
    except SgamError as e:
        print(f"cannot open store: {e}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    try:
        n = restore(store, stream, tenant_id=tenant)
    except SgamError as e:
        print(f"restore stopped: {e}", file=sys.stderr)
        return 2
    finally:
        store.close()
    print(f"{n} ledger records restored in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return 0


def run_export(
    *,
    store_url: str | None,
    api_url: str | None,
    key: str | None,
    tenant: str,
    kind: ExportKind,
    as_of: datetime | None,
    known_at: datetime | None,
    out: IO[str] | None = None,
) -> int:
    target = out or sys.stdout
    if api_url:
        if kind != ExportKind.CURRENT:
            print("over --api only --current can be exported; use --store", file=sys.stderr)
            return 2
        return _export_http(api_url, key, tenant=tenant, as_of=as_of, known_at=known_at, out=target)
    try:
        store = open_store(store_url, init=False)
        missing = _missing_file(store)
        if missing is not None:  # init would create an empty file, and export nothing
            store.close()
            print(f"cannot open store: no SQLite file at {missing}", file=sys.stderr)
            return 2
        store.init()
    except SgamError as e:
        print(f"cannot open store: {e}", file=sys.stderr)
        return 2
    try:
        n = export(store, target, tenant_id=tenant, kind=kind, as_of=as_of, known_at=known_at)
    except SgamError as e:
        print(f"export stopped: {e}", file=sys.stderr)
        return 2
    finally:
        store.close()
    print(f"{n} records exported", file=sys.stderr)
    return 0


def _missing_file(store: Store) -> str | None:
    """The path of a file-backed store (SQLite) whose file is not there, else None."""
    path = getattr(store, "path", None)  # only SQLite stores have one
    return (
        path if isinstance(path, str) and path != ":memory:" and not Path(path).exists() else None
    )


def _export_http(
    api_url: str,
    key: str | None,
    *,
    tenant: str,
    as_of: datetime | None,
    known_at: datetime | None,
    out: IO[str],
) -> int:
    from api.client import SgamClient

    n = 0
    with SgamClient(api_url, api_key=key) as client:
        for f in client.iter_facts(tenant, as_of=as_of, known_at=known_at):
            out.write(f.model_dump_json(exclude={"tenant_id"}) + "\n")
            n += 1
    print(f"{n} records exported", file=sys.stderr)
    return 0


__all__ = ["DEFAULT_TENANT", "REJECT_FILE_FAILED", "run_export", "run_import"]
