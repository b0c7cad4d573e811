// name: search.vector_facts
// params: fetch, vector, tenant_id, model, as_of, known_at
// mode: read
// Nearest facts with a version open in system time (cosine; Neo4j reports (1 + cos) / 2),
// filtered inside the index by tenant, model and live; a fact is visible (ok) when one of
// its open versions is valid at $as_of and was recorded by $known_at.
CYPHER 25
MATCH (v:FactVector)
  SEARCH v IN (VECTOR INDEX fact_vector FOR $vector
    WHERE v.live_scope = $tenant_id + ' ' + $model
    LIMIT $fetch) SCORE AS score
RETURN v.fact_id AS item_id, score,
       EXISTS {
         MATCH ()-[r:FACT {fact_id: v.fact_id}]->()
         WHERE r.tenant_id = $tenant_id AND r.current = true
           AND r.valid_from <= $as_of AND (r.valid_to IS NULL OR r.valid_to > $as_of)
           AND r.recorded_at <= $known_at
       } AS ok
