// name: ledger.doomed_endpoints
// params: tenant_id, episode_id
// mode: read
// The end nodes of the fact versions that deleting this episode removes.
MATCH (s)-[r:FACT {tenant_id: $tenant_id, source_episode_id: $episode_id}]->(o)
USING INDEX r:FACT(tenant_id, source_episode_id)
WHERE r.sources = [$episode_id]
RETURN collect(DISTINCT s.entity_id) + collect(DISTINCT o.entity_id) AS entity_ids,
       collect(DISTINCT o.value_key) AS value_keys
