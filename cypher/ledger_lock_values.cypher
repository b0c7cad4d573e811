// name: ledger.lock_values
// params: tenant_id, values
// mode: write
// The Value nodes of new literal versions, created if new and locked, in value_key order
// (see ledger.lock_entities for the global lock order); the inserts then only MATCH them.
UNWIND $values AS row
MERGE (v:Value {tenant_id: $tenant_id, value_key: row.value_key})
  ON CREATE SET v.value = row.value, v.value_type = row.value_type
SET v._lock = true
REMOVE v._lock
