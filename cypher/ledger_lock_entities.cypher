// name: ledger.lock_entities
// params: tenant_id, entity_ids
// mode: write
// Take the write locks of the nodes a transaction is about to link, in one global order:
// timelines (ledger.lock_timelines) → entities → values → episodes, each sorted by key.
// Creating or deleting a relationship locks both end nodes; shared nodes (a Value like
// "gold", a subject with several timelines, an episode) would otherwise be locked in row
// order by different writers, who could then deadlock. SET + REMOVE of a scratch
// property takes the lock and leaves the node as it was.
UNWIND $entity_ids AS id
MATCH (e:Entity {tenant_id: $tenant_id, entity_id: id})
SET e._lock = true
REMOVE e._lock
