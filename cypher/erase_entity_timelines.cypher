// name: erase.entity_timelines
// params: tenant_id, entity_id
// mode: read
// Timelines holding a version (any system time) whose subject or object is the entity,
// with the fact ids of those versions.
MATCH (:Entity {tenant_id: $tenant_id, entity_id: $entity_id})-[r:FACT]-()
WHERE r.tenant_id = $tenant_id
RETURN r.timeline_key AS key, collect(DISTINCT r.fact_id) AS fact_ids
