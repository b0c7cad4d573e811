"""Text helpers shared by the stores and the ranker: words, query terms, token budgets.

Query terms are plain words; each store quotes them into its own fulltext syntax, so no
text from a request ever reaches a query language unquoted.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable

# Runs of letters and digits: the same split the SQLite unicode61 tokenizer and Neo4j's
# standard analyzer make, and underscores split snake_case predicate names into words.
_WORD = re.compile(r"[^\W_]+")

# Function words that carry no topic. Dropping them keeps BM25 from ranking on "the"/"is"
# (and keeps fulltext fast: they match almost every row).
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are aren as at be because been
    before being below between both but by can could did didn do does doesn doing don down
    during each few for from further had hadn has hasn have haven having he her here hers
    herself him himself his how i if in into is isn it its itself just ll m me might more
    most mustn my myself needn no nor not now o of off on once only or other our ours
    ourselves out over own re s same shan she should shouldn so some such t than that the
    their theirs them themselves then there these they this those through to too under
    until up ve very was wasn we were weren what when where which while who whom why will
    with won would wouldn y you your yours yourself yourselves
    """.split()  # noqa: SIM905 - a word list reads best as text
)


def words(text: str) -> list[str]:
    """Lower-cased words of ``text``, in order."""
    return [w.lower() for w in _WORD.findall(text)]


def index_terms(prefix: str, text: str) -> str:
    """What a store's fulltext index holds of ``text``: each of its :func:`words` as
    ``<prefix>_<word>``, space-separated. With one prefix per tenant (and kind), each
    tenant's words are terms of their own: the index's document frequencies are the
    tenant's, and a query names only its tenant's terms. Injective: a word holds no "_"."""
    return " ".join(f"{prefix}_{w}" for w in words(text))


def terms(text: str, *, limit: int = 32) -> list[str]:
    """The distinct content words of a query, in order; every word when all are stopwords."""
    ws = words(text)
    content = [w for w in ws if w not in STOPWORDS]
    out: list[str] = []
    for w in content or ws:
        if w not in out:
            out.append(w)
    return out[:limit]


def stem(word: str) -> str:
    """A light stemmer for matching predicate names against questions: plural, -ing, -ed
    and a final e come off, so "deadlines"/"deadline" and "lives"/"living"/"lived" meet.
    Not for indexing (the fulltext indexes have their own)."""
    w = word.lower()
    if len(w) <= 3:
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(("sses", "xes", "zes", "ches", "shes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if w.endswith("ing") and len(w) > 5:
        w = w[:-3]
    elif w.endswith("ed") and len(w) > 4:
        w = w[:-2]
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    return w


def stems(text: str) -> set[str]:
    return {stem(w) for w in words(text) if w not in STOPWORDS}


def fts5_query(prefix: str, query_terms: Iterable[str]) -> str:
    """An FTS5 MATCH expression: rows holding any of the terms under one scope's prefix
    (the SQLite index holds each word as ``<prefix>_<word>``, see
    graph.stores.sqlite.terms), so it can only match that scope's rows.

    Every term is a quoted string (quotes doubled), so FTS5 operators in user text are
    inert; the expression itself is passed to SQLite as a parameter.
    """
    quoted = " OR ".join('"' + f"{prefix}_{t}".replace('"', '""') + '"' for t in query_terms)
    return f"terms : ({quoted})"


_LUCENE_SPECIAL = re.compile(r'([+\-&|!(){}\[\]^"~*?:\\/])')


def lucene_query(query_terms: Iterable[str]) -> str:
    """A Lucene query (Neo4j fulltext) of the terms OR-ed, every special character escaped."""
    return " OR ".join(_LUCENE_SPECIAL.sub(r"\\\1", t) for t in query_terms)


def estimate_tokens(text: str) -> int:
    """Tokens a text costs in an LLM prompt: about four characters each in English."""
    return max(1, math.ceil(len(text) / 4))


def mentions_value(text: str, value: str) -> bool:
    """Whether ``text`` states ``value`` as a whole word or phrase (case-insensitive)."""
    v = value.strip()
    if not v:
        return False
    pattern = r"(?<![\w])" + re.escape(v) + r"(?![\w])"
    return re.search(pattern, text, flags=re.IGNORECASE) is not None


def mentioning_any(values: Iterable[str]) -> Callable[[str], bool]:
    """``text -> any(mentions_value(text, v) for v in values)``, with one pattern for all
    of them, compiled once: a staleness check asks it of each episode it shows, for as
    many values as the episodes' timelines held (thousands after a bulk import), and a
    pattern per value and text took 673 ms for 2,000 values and 10 episodes, the one
    pattern 32 ms (bench/stale_match.py). An alternation between the two boundaries
    matches exactly where one of its values would: each alternative is tried at each
    position."""
    parts = sorted({re.escape(v) for v in (value.strip() for value in values) if v})
    if not parts:
        return lambda text: False
    pattern = re.compile(r"(?<![\w])(?:" + "|".join(parts) + r")(?![\w])", re.IGNORECASE)
    return lambda text: pattern.search(text) is not None


__all__ = [
    "STOPWORDS",
    "estimate_tokens",
    "fts5_query",
    "index_terms",
    "lucene_query",
    "mentioning_any",
    "mentions_value",
    "stem",
    "stems",
    "terms",
    "words",
]
