// name: ledger.episodes_occurred_at
// params: tenant_id, episode_ids
// mode: read
UNWIND $episode_ids AS id
MATCH (e:Episode {tenant_id: $tenant_id, episode_id: id})
RETURN e.episode_id AS episode_id, e.occurred_at AS occurred_at
