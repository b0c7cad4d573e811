// name: retention.expired_timelines
// params: tenant_id, predicate, before
// mode: read
// Timelines of one predicate with a version (any system time) whose validity ended
// before $before.
MATCH ()-[r:FACT {tenant_id: $tenant_id, predicate: $predicate}]->()
WHERE r.valid_to < $before
RETURN DISTINCT r.timeline_key AS key
ORDER BY key
