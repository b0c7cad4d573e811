// name: search.backfill_facts
// params: after, batch
// mode: read
// Migration: the next fact versions after $after (by version id, through its uniqueness
// constraint's index, so each batch starts where the last one ended) that lack the
// fulltext terms or the current flag of the search indexes; the caller computes their
// terms (graph.stores.neo4j.codec.index_terms) and writes them with search.set_fact_terms.
MATCH ()-[r:FACT]->()
WHERE r.version_id > $after AND (r.terms IS NULL OR r.current IS NULL)
RETURN r.version_id AS id, r.tenant_id AS tenant_id, r.fact_text AS text,
       r.retired_at IS NULL AS open
ORDER BY r.version_id
LIMIT $batch
