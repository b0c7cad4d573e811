// name: erase.delete_assertions
// params: tenant_id, rows
// mode: write
// Ledger entries by (timeline key, seq).
UNWIND $rows AS row
MATCH (a:Assertion {tenant_id: $tenant_id, timeline_key: row.key})
WHERE a.seq = row.seq
DELETE a
