// name: erase.mentioning_episodes
// params: tenant_id, entity_id
// mode: read
// The episodes that mention an entity or source a version about it (at any system
// time), those that still exist.
CALL () {
  MATCH (ep:Episode {tenant_id: $tenant_id})-[:MENTIONS]->(:Entity {tenant_id: $tenant_id, entity_id: $entity_id})
  RETURN ep.episode_id AS id
  UNION
  MATCH (:Entity {tenant_id: $tenant_id, entity_id: $entity_id})-[r:FACT]-()
  WHERE r.tenant_id = $tenant_id AND r.source_episode_id IS NOT NULL
  RETURN r.source_episode_id AS id
}
WITH DISTINCT id
MATCH (ep:Episode {tenant_id: $tenant_id, episode_id: id})
RETURN ep.episode_id AS episode_id
