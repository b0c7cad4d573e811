// name: ledger.holds_lease
// params: tenant_id, episode_id, owner
// mode: write
// Whether this worker still holds the episode's lease. The episode's write lock is taken
// first (as every queue update does) and held until commit: a claim by another worker
// waits for this transaction, so the facts it writes cannot land after a lost lease.
MATCH (e:Episode {tenant_id: $tenant_id, episode_id: $episode_id})
SET e.queue_lock = true
REMOVE e.queue_lock
RETURN e.status = 'processing' AND e.lease_owner = $owner AS held
