// name: search.gather_candidates
// params: tenant_id, fact_query, entity_query, episode_query, fetch, vector, model, as_of, known_at
// mode: read
// Every index's candidates of one search in one query (known_at = now): the rows of the
// six per-kind templates, tagged by kind and signal. Fact vectors are filtered inside the
// index to the facts with a version open in system time, as in search.vector_facts.
CYPHER 25
CALL () {
// include: gather_candidate_branches
  UNION ALL
  WITH $vector AS q WHERE q IS NOT NULL
  MATCH (v:FactVector)
    SEARCH v IN (VECTOR INDEX fact_vector FOR q
      WHERE v.live_scope = $tenant_id + ' ' + $model
      LIMIT $fetch) SCORE AS score
  RETURN 'fact' AS kind, 'vector' AS signal, v.fact_id AS item_id, score,
         EXISTS {
           MATCH ()-[r:FACT {fact_id: v.fact_id}]->()
           WHERE r.tenant_id = $tenant_id AND r.current = true
             AND r.valid_from <= $as_of AND (r.valid_to IS NULL OR r.valid_to > $as_of)
             AND r.recorded_at <= $known_at
         } AS ok
}
// One row per index: how many rows it gave (fewer than $fetch: it has nothing more) and
// the visible ones, so that hundreds of rows do not cross the wire one by one.
WITH kind, signal, count(*) AS n, collect(CASE WHEN ok THEN [item_id, score] END) AS hits
RETURN kind, signal, n, hits
