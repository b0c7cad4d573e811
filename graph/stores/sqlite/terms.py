"""What the SQLite fulltext index holds of a text: the tenant's own terms.

Every word of a searchable text (:func:`graph.retrieval.text.words`) is indexed as
``<prefix>_<word>``, the prefix standing for one tenant's items of one kind. FTS5's
document frequencies are per term, so they are then per tenant and kind: another
tenant's rows change neither this tenant's BM25 ranking nor the cost of its queries, and
a query needs no tenant clause (it names its own prefix only; search still checks each
row's tenant).

The prefix is 16 consonants (64 bits of a BLAKE2b hash of tenant and kind), not
the tenant id itself, because of the porter stemmer: it stems a token only when the
token is at most 64 bytes long, and its rules look at the vowels of the whole token. A
short, vowel-free prefix leaves each word stemmed as it would be on its own (except
words of one or two letters, words starting with "y" and a few whose stem is a vowel
and a consonant, "use" for one: the stemmer treats them a little differently, the same
way at index and query time; tests/unit/test_sqlite_terms.py). Two tenants sharing a
prefix (a 64-bit collision) would share document frequencies only: search filters rows
by tenant id.

These functions are also SQL functions on every connection of the store (the triggers
of entity and episode documents and the index's content view call them), so their
output is part of the file layout: changing it needs a layout version that re-indexes
(graph.stores.sqlite.store.MIGRATIONS), or the index's deletes would not match.
"""

from __future__ import annotations

import hashlib
import sqlite3

from graph.retrieval.text import index_terms

# Consonants only (the porter stemmer counts vowels), "y" left out (it is a vowel after a
# consonant); one per 4 bits.
_ALPHABET = "bcdfghjklmnpqrst"


def term_prefix(tenant_id: str, kind: str) -> str:
    """The prefix of one tenant's terms of one kind (``fact``, ``entity``, ``episode``)."""
    digest = hashlib.blake2b(f"{tenant_id}\x00{kind}".encode(), digest_size=8).digest()
    return "".join(_ALPHABET[b >> 4] + _ALPHABET[b & 15] for b in digest)


def _sql_prefix(tenant_id: object, kind: object) -> str | None:
    if not isinstance(tenant_id, str) or not isinstance(kind, str):
        return None
    return term_prefix(tenant_id, kind)


def _sql_terms(prefix: object, text: object) -> str | None:
    if not isinstance(prefix, str) or not isinstance(text, str):
        return None
    return index_terms(prefix, text)


def register(conn: sqlite3.Connection) -> None:
    """Make ``sgam_prefix(tenant_id, kind)`` and ``sgam_terms(prefix, text)`` SQL functions
    of this connection (deterministic: same arguments, same value)."""
    conn.create_function("sgam_prefix", 2, _sql_prefix, deterministic=True)
    conn.create_function("sgam_terms", 2, _sql_terms, deterministic=True)


__all__ = ["index_terms", "register", "term_prefix"]
