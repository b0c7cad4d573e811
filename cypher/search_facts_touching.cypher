// name: search.facts_touching
// params: tenant_id, entity_ids, as_of, known_at, limit
// mode: read
// Facts valid in the window with one of these entities as subject (literal or relation)
// or object: one hop of the query's expansion, anchored on the entity nodes.
UNWIND $entity_ids AS id
MATCH (:Entity {tenant_id: $tenant_id, entity_id: id})-[r:FACT]-()
WHERE r.tenant_id = $tenant_id
  AND r.valid_from <= $as_of AND (r.valid_to IS NULL OR r.valid_to > $as_of)
  AND r.recorded_at <= $known_at AND (r.retired_at IS NULL OR r.retired_at > $known_at)
WITH DISTINCT r
ORDER BY r.valid_from DESC, r.fact_id
LIMIT $limit
RETURN
// include: fact_fields
AS fact
