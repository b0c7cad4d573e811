// name: ledger.episode_timelines
// params: tenant_id, episode_id
// mode: read
MATCH (a:Assertion {tenant_id: $tenant_id, source_episode_id: $episode_id})
RETURN DISTINCT a.timeline_key AS key
