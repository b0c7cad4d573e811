// name: ledger.current_versions
// params: tenant_id, keys
// mode: read
// Versions not retired in system time, of each timeline.
UNWIND $keys AS key
MATCH ()-[r:FACT {tenant_id: $tenant_id, timeline_key: key}]->()
USING INDEX r:FACT(tenant_id, timeline_key)
WHERE r.retired_at IS NULL
// include: fact_projection
ORDER BY r.valid_from
