// name: ledger.upsert_entities
// params: tenant_id, rows
// mode: write
// Create the entities, or give an existing one its (new) type, and hold each one's write
// lock (rows arrive sorted by id: one global lock order, see ledger.lock_entities). The
// type becomes a label too (:Entity:Customer): a dynamic label from a parameter, never
// text formatted into the query, and the store checks it against the type-name pattern.
UNWIND $rows AS row
MERGE (e:Entity {tenant_id: $tenant_id, entity_id: row.entity_id})
  ON CREATE SET
    e.name = row.name,
    e.aliases = row.aliases,
    e.summary = row.summary,
    e.created_at = datetime(row.created_at),
    e.scope = 't' + replace(replace($tenant_id, '_', '_u'), '-', '_h')
SET e.entity_type = row.entity_type, e:$(row.entity_type)
