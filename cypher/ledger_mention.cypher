// name: ledger.mention
// params: tenant_id, pairs
// mode: write
// The entities are locked already (ledger.upsert_entities); the store locks the
// episodes, in order, before this runs.
UNWIND $pairs AS pair
MATCH (ep:Episode {tenant_id: $tenant_id, episode_id: pair.episode_id})
MATCH (en:Entity {tenant_id: $tenant_id, entity_id: pair.entity_id})
MERGE (ep)-[m:MENTIONS]->(en)
  ON CREATE SET m.tenant_id = $tenant_id
