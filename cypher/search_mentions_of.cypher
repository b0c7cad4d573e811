// name: search.mentions_of
// params: tenant_id, episode_ids
// mode: read
UNWIND $episode_ids AS id
MATCH (:Episode {tenant_id: $tenant_id, episode_id: id})-[:MENTIONS]->(en:Entity)
WHERE en.tenant_id = $tenant_id
RETURN id AS episode_id, en.entity_id AS entity_id
ORDER BY episode_id, entity_id
