// name: search.vector_facts_past
// params: fetch, vector, tenant_id, model, as_of, known_at
// mode: read
// Nearest facts for a past known_at: every fact of the tenant is a candidate (the index
// filters by tenant and model); a fact is visible (ok) when one of its versions was open
// in system time at $known_at and valid at $as_of.
CYPHER 25
MATCH (v:FactVector)
  SEARCH v IN (VECTOR INDEX fact_vector FOR $vector
    WHERE v.scope = $tenant_id + ' ' + $model
    LIMIT $fetch) SCORE AS score
RETURN v.fact_id AS item_id, score,
       EXISTS {
         MATCH ()-[r:FACT {fact_id: v.fact_id}]->()
         WHERE r.tenant_id = $tenant_id
           AND r.valid_from <= $as_of AND (r.valid_to IS NULL OR r.valid_to > $as_of)
           AND r.recorded_at <= $known_at
           AND (r.retired_at IS NULL OR r.retired_at > $known_at)
       } AS ok
