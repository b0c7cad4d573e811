// name: ledger.insert_relation_versions
// params: tenant_id, rows
// mode: write
// New versions of relation facts: (subject)-[:FACT]->(object entity).
UNWIND $rows AS row
MATCH (s:Entity {tenant_id: $tenant_id, entity_id: row.subject_id})
MATCH (o:Entity {tenant_id: $tenant_id, entity_id: row.object_id})
CREATE (s)-[r:FACT]->(o)
// include: fact_version_set
