// name: transfer.assertions
// params: tenant_id, after_seq, after_fact, limit
// mode: read
// One page of the tenant's ledger in recorded order after the cursor (seq, fact id):
// writers in separate processes may share a seq, never with the same fact id.
MATCH (a:Assertion {tenant_id: $tenant_id})
USING INDEX a:Assertion(tenant_id, timeline_key)
WHERE a.timeline_key IS NOT NULL AND (a.seq > $after_seq OR (a.seq = $after_seq AND a.fact_id > $after_fact))
RETURN a {.*,
  recorded_at: toString(a.recorded_at), valid_from: toString(a.valid_from),
  valid_to: toString(a.valid_to)} AS assertion
ORDER BY a.seq, a.fact_id
LIMIT $limit
