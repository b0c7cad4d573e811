// name: search.fulltext_facts
// params: query, fetch, tenant_id, as_of, known_at
// mode: read
// BM25 over fact sentences. The fulltext index holds every tenant and every version, so
// the store over-fetches and keeps the rows marked ok: this tenant's versions valid at
// $as_of as known at $known_at.
CALL db.index.fulltext.queryRelationships('fact_text', $query, {limit: $fetch})
YIELD relationship AS r, score
RETURN r.fact_id AS item_id, score,
       coalesce(r.tenant_id = $tenant_id
         AND r.valid_from <= $as_of AND (r.valid_to IS NULL OR r.valid_to > $as_of)
         AND r.recorded_at <= $known_at
         AND (r.retired_at IS NULL OR r.retired_at > $known_at), false) AS ok
