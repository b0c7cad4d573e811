// name: ledger.insert_value_versions
// params: tenant_id, rows
// mode: write
// New versions of literal facts: (subject)-[:FACT]->(:Value), one shared Value node per
// (tenant, value type, canonical value), so "who has status gold" is one node's edges.
// ledger.lock_values has created and locked the Value nodes.
UNWIND $rows AS row
MATCH (s:Entity {tenant_id: $tenant_id, entity_id: row.subject_id})
MATCH (v:Value {tenant_id: $tenant_id, value_key: row.value_key})
CREATE (s)-[r:FACT]->(v)
// include: fact_version_set
