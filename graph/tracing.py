"""A tiny tracing facade, so the domain can mark spans without depending on OpenTelemetry.

Off by default: :func:`span` hands back one shared no-op context manager and
:func:`traced` calls straight through, a global lookup per call. The API layer turns it on
(:func:`enable`) when an OTLP endpoint is configured, or a test hands it a provider; then
spans go to OpenTelemetry (``opentelemetry-api``, imported only here and only when on)::

    with span("memory.write_facts", tenant_id=tenant):
        ...

    @traced("store.query", args={"name": "db.operation.name"}, attrs={"db.system": "neo4j"})
    def _run(self, name, params): ...

Attributes must be str, bool, int or float (others are turned into text; ``None`` is left
out). Values of requests never become attributes here: ids and names only.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any, ParamSpec, TypeVar, cast

P = ParamSpec("P")
R = TypeVar("R")

_NOOP: AbstractContextManager[None] = nullcontext()
_tracer: Any = None  # an opentelemetry Tracer while enabled


def enable(provider: Any = None) -> bool:
    """Send spans to ``provider`` (an OpenTelemetry TracerProvider; default: the global
    one). False when ``opentelemetry-api`` is not installed (tracing stays off)."""
    global _tracer
    try:
        from opentelemetry import trace
    except ImportError:  # pragma: no cover - a dependency; absent only in slim installs
        return False
    source = provider if provider is not None else trace.get_tracer_provider()
    _tracer = source.get_tracer("sgam")
    return True


def disable() -> None:
    global _tracer
    _tracer = None


def enabled() -> bool:
    return _tracer is not None


def current_tracer() -> Any:
    """The OpenTelemetry tracer while tracing is on, else None (for the API's server span,
    which needs more of OpenTelemetry than this facade offers)."""
    return _tracer


def _attrs(values: Mapping[str, Any]) -> dict[str, str | bool | int | float]:
    out: dict[str, str | bool | int | float] = {}
    for k, v in values.items():
        if v is None:
            continue
        out[k] = v if isinstance(v, str | bool | int | float) else str(v)
    return out


def span(name: str, **attrs: Any) -> AbstractContextManager[Any]:
    """A span around a block, child of the current one; a no-op while tracing is off."""
    tracer = _tracer
    if tracer is None:
        return _NOOP
    return cast(
        AbstractContextManager[Any], tracer.start_as_current_span(name, attributes=_attrs(attrs))
    )


def set_attributes(**attrs: Any) -> None:
    """Add attributes to the current span (when tracing is on and a span is recording)."""
    if _tracer is None:
        return
    from opentelemetry import trace

    trace.get_current_span().set_attributes(_attrs(attrs))


def traced(
    name: str, *, args: Mapping[str, str] | None = None, attrs: Mapping[str, Any] | None = None
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate a function (or a generator function under ``@contextmanager``) with a span.

    ``attrs`` are fixed attributes; ``args`` maps parameter names of the function to
    attribute names, whose values in each call become attributes too
    (``{"tenant_id": "sgam.tenant"}``).
    """
    wanted = dict(args or {})
    static = dict(attrs or {})

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        signature = inspect.signature(fn)

        def attributes(a: tuple[Any, ...], kw: dict[str, Any]) -> dict[str, Any]:
            found = dict(static)
            if wanted:
                bound = signature.bind_partial(*a, **kw).arguments
                for param, attr in wanted.items():
                    if param in bound:
                        found[attr] = bound[param]
            return found

        if inspect.isgeneratorfunction(fn):
            gen_fn = cast(Callable[..., Iterator[Any]], fn)

            @functools.wraps(fn)
            def gen_wrapper(*a: Any, **kw: Any) -> Iterator[Any]:
                if _tracer is None:
                    return (yield from gen_fn(*a, **kw))
                with span(name, **attributes(a, kw)):
                    return (yield from gen_fn(*a, **kw))

            return cast(Callable[P, R], gen_wrapper)

        @functools.wraps(fn)
        def wrapper(*a: P.args, **kw: P.kwargs) -> R:
            if _tracer is None:
                return fn(*a, **kw)
            with span(name, **attributes(a, dict(kw))):
                return fn(*a, **kw)

        return wrapper

    return decorate


__all__ = ["current_tracer", "disable", "enable", "enabled", "set_attributes", "span", "traced"]
