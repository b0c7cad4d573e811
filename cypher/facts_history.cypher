// name: facts.history
// params: tenant_id, subject, predicate, object, known_at
// mode: read
// A timeline's intervals as known at $known_at, in valid-time order.
// Start at the entity node: without the hint the planner may prefer a tenant-wide
// index (e.g. fact_recorded), whose cost grows with the tenant.
MATCH (e:Entity {tenant_id: $tenant_id, entity_id: $subject})-[r:FACT]->()
USING INDEX e:Entity(tenant_id, entity_id)
WHERE r.tenant_id = $tenant_id AND r.predicate = $predicate
  AND ($object IS NULL OR r.object = $object)
  AND r.recorded_at <= $known_at AND (r.retired_at IS NULL OR r.retired_at > $known_at)
// include: fact_projection
ORDER BY r.valid_from, r.fact_id
