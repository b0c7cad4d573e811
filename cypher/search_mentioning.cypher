// name: search.mentioning
// params: tenant_id, entity_ids, known_at, limit
// mode: read
// Episodes mentioning these entities, latest first.
UNWIND $entity_ids AS id
MATCH (:Entity {tenant_id: $tenant_id, entity_id: id})<-[:MENTIONS]-(ep:Episode)
WHERE ep.tenant_id = $tenant_id AND ep.recorded_at <= $known_at
RETURN ep.episode_id AS episode_id, id AS entity_id
ORDER BY ep.occurred_at DESC, episode_id, entity_id
LIMIT $limit
