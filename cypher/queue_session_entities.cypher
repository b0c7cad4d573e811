// name: queue.session_entities
// params: tenant_id, session_id, limit
// mode: read
// Entities the session's episodes mention, the most recently mentioned first.
MATCH (ep:Episode {tenant_id: $tenant_id, session_id: $session_id})-[:MENTIONS]->(en:Entity)
USING INDEX SEEK ep:Episode(tenant_id, session_id)
WITH en, max(ep.occurred_at) AS last_seen
RETURN en.entity_id AS entity_id
ORDER BY last_seen DESC, entity_id
LIMIT $limit
