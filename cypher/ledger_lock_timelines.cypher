// name: ledger.lock_timelines
// params: tenant_id, keys
// mode: write
// Writing a property takes the node's exclusive lock until the transaction ends, so two
// writers on one timeline run one after the other. $keys arrive sorted: every writer
// locks in the same order and they cannot deadlock on timelines.
UNWIND $keys AS key
MERGE (t:Timeline {tenant_id: $tenant_id, key: key})
SET t.writes = coalesce(t.writes, 0) + 1
