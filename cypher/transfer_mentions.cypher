// name: transfer.mentions
// params: tenant_id, after_episode, after_entity, limit
// mode: read
// One page of (episode, entity) mentions after the keyset cursor (both ids).
MATCH (ep:Episode {tenant_id: $tenant_id})-[:MENTIONS]->(en:Entity {tenant_id: $tenant_id})
WHERE ep.episode_id > $after_episode
   OR (ep.episode_id = $after_episode AND en.entity_id > $after_entity)
RETURN ep.episode_id AS episode_id, en.entity_id AS entity_id
ORDER BY episode_id, entity_id
LIMIT $limit
