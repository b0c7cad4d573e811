// name: search.timeline_versions
// params: tenant_id, pairs, known_at
// mode: read
// Every version known at $known_at of these (subject, predicate) timelines.
UNWIND $pairs AS pair
MATCH (:Entity {tenant_id: $tenant_id, entity_id: pair[0]})-[r:FACT]->()
WHERE r.tenant_id = $tenant_id AND r.predicate = pair[1]
  AND r.recorded_at <= $known_at AND (r.retired_at IS NULL OR r.retired_at > $known_at)
RETURN
// include: fact_fields
AS fact
ORDER BY r.valid_from
