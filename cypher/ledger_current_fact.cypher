// name: ledger.current_fact
// params: tenant_id, fact_id
// mode: read
MATCH ()-[r:FACT {fact_id: $fact_id}]->()
USING INDEX r:FACT(fact_id)
WHERE r.tenant_id = $tenant_id AND r.retired_at IS NULL
RETURN r {.*,
  // Times as RFC 3339 text: the Python driver unpacks DATETIME values ~10x slower.
  valid_from: toString(r.valid_from), valid_to: toString(r.valid_to),
  recorded_at: toString(r.recorded_at), retired_at: toString(r.retired_at),
  embedding: null} AS fact
