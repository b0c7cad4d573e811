// name: facts.by_subject
// params: tenant_id, subject, predicate, object, memory_type, source_episode_id, as_of, known_at, after, limit
// mode: read
// Facts about one subject valid at $as_of (any valid time when null) as known at $known_at.
// With $as_of = now and $known_at = now this is the entity's current state. Anchored on
// the entity node (unique index), so its cost does not grow with the tenant's size.
// Start at the entity node: without the hint the planner may prefer a tenant-wide
// index (e.g. fact_recorded), whose cost grows with the tenant.
MATCH (e:Entity {tenant_id: $tenant_id, entity_id: $subject})-[r:FACT]->()
USING INDEX e:Entity(tenant_id, entity_id)
WHERE r.tenant_id = $tenant_id
  AND r.recorded_at <= $known_at AND (r.retired_at IS NULL OR r.retired_at > $known_at)
  AND ($as_of IS NULL OR (r.valid_from <= $as_of AND (r.valid_to IS NULL OR r.valid_to > $as_of)))
  AND ($predicate IS NULL OR r.predicate = $predicate)
  AND ($object IS NULL OR r.object = $object)
  AND ($memory_type IS NULL OR r.memory_type = $memory_type)
  AND ($source_episode_id IS NULL OR $source_episode_id IN r.sources)
  // keyset cursor: strictly after (subject, predicate, fact_id)
  AND ($after IS NULL OR r.subject > $after[0]
       OR (r.subject = $after[0] AND (r.predicate > $after[1]
           OR (r.predicate = $after[1] AND r.fact_id > $after[2]))))
// include: fact_projection
ORDER BY r.subject, r.predicate, r.fact_id
LIMIT $limit
