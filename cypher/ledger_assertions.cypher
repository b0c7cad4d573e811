// name: ledger.assertions
// params: tenant_id, keys
// mode: read
UNWIND $keys AS key
MATCH (a:Assertion {tenant_id: $tenant_id, timeline_key: key})
RETURN a {.*,
  recorded_at: toString(a.recorded_at), valid_from: toString(a.valid_from),
  valid_to: toString(a.valid_to)} AS assertion
ORDER BY a.seq
