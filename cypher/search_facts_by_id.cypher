// name: search.facts_by_id
// params: tenant_id, fact_ids, as_of, known_at
// mode: read
// The version of each fact valid at $as_of as known at $known_at (fact_id index).
UNWIND $fact_ids AS id
MATCH ()-[r:FACT]->()
WHERE r.fact_id = id AND r.tenant_id = $tenant_id
  AND r.valid_from <= $as_of AND (r.valid_to IS NULL OR r.valid_to > $as_of)
  AND r.recorded_at <= $known_at AND (r.retired_at IS NULL OR r.retired_at > $known_at)
RETURN
// include: fact_fields
AS fact
