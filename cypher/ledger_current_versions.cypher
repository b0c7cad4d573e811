// name: ledger.current_versions
// params: tenant_id, keys, since
// mode: read
// Versions not retired in system time, of each timeline; with $since (not null), only
// those whose validity ends after it or never (graph.port.LedgerTx.current_versions).
UNWIND $keys AS key
MATCH ()-[r:FACT {tenant_id: $tenant_id, timeline_key: key}]->()
USING INDEX r:FACT(tenant_id, timeline_key)
WHERE r.retired_at IS NULL
  AND ($since IS NULL OR r.valid_to IS NULL OR r.valid_to > $since)
// include: fact_projection
ORDER BY r.valid_from
