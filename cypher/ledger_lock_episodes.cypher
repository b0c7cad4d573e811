// name: ledger.lock_episodes
// params: tenant_id, episode_ids
// mode: write
// Episodes last in the global lock order (see ledger.lock_entities), sorted by id.
UNWIND $episode_ids AS id
MATCH (e:Episode {tenant_id: $tenant_id, episode_id: id})
SET e._lock = true
REMOVE e._lock
