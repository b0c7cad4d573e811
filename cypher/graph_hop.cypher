// name: graph.hop
// params: tenant_id, frontier, outgoing, incoming, predicates, as_of, known_at
// mode: read
// One hop of a k-hop traversal: the relation facts touching the frontier that are valid
// at $as_of and known at $known_at. The store calls it once per hop, so the validity
// filter applies on every hop and an expired relation never leads further.
UNWIND $frontier AS id
MATCH (n:Entity {tenant_id: $tenant_id, entity_id: id})
USING INDEX n:Entity(tenant_id, entity_id)
CALL (n) {
  MATCH (n)-[r:FACT]->(:Entity)
  WHERE $outgoing
  RETURN r
  UNION
  MATCH (n)<-[r:FACT]-(:Entity)
  WHERE $incoming
  RETURN r
}
WITH DISTINCT r
WHERE r.tenant_id = $tenant_id
  AND r.valid_from <= $as_of AND (r.valid_to IS NULL OR r.valid_to > $as_of)
  AND r.recorded_at <= $known_at AND (r.retired_at IS NULL OR r.retired_at > $known_at)
  AND ($predicates IS NULL OR r.predicate IN $predicates)
// include: fact_projection
