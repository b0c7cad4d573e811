// name: search.fulltext_facts
// params: query, fetch, tenant_id, as_of, known_at
// mode: read
// BM25 over fact sentences. $query names only the tenant's own terms (terms_current, the
// open versions, for the present; terms, every version, for a past known_at), so Lucene
// ranks this tenant's versions only; the window is checked on the rows it returns (ok).
CALL db.index.fulltext.queryRelationships('fact_text', $query, {limit: $fetch})
YIELD relationship AS r, score
RETURN r.fact_id AS item_id, score,
       coalesce(r.tenant_id = $tenant_id
         AND r.valid_from <= $as_of AND (r.valid_to IS NULL OR r.valid_to > $as_of)
         AND r.recorded_at <= $known_at
         AND (r.retired_at IS NULL OR r.retired_at > $known_at), false) AS ok
