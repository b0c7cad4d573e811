// name: queue.merge_add
// params: tenant_id, rows
// mode: write
// One candidate per (entity, existing entity) pair; a pair seen again keeps the first.
UNWIND $rows AS row
MERGE (m:MergeCandidate
       {tenant_id: $tenant_id, entity_id: row.entity_id, existing_entity_id: row.existing_entity_id})
  ON CREATE SET m += row
