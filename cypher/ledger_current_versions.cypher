// name: ledger.current_versions
// params: tenant_id, keys
// mode: read
// Versions not retired in system time, of each timeline.
UNWIND $keys AS key
MATCH ()-[r:FACT {tenant_id: $tenant_id, timeline_key: key}]->()
USING INDEX r:FACT(tenant_id, timeline_key)
WHERE r.retired_at IS NULL
RETURN r {.*,
  // Times as RFC 3339 text: the Python driver unpacks DATETIME values ~10x slower.
  valid_from: toString(r.valid_from), valid_to: toString(r.valid_to),
  recorded_at: toString(r.recorded_at), retired_at: toString(r.retired_at),
  embedding: null} AS fact
ORDER BY r.valid_from
