// name: tenant.purge_facts
// params: tenant_id, batch
// mode: write
// First phase of a purge: fact relationships in batches, so that deleting an entity with
// a long history later never drags all its relationships into one transaction.
MATCH ()-[r:FACT {tenant_id: $tenant_id}]->()
WHERE r.predicate IS NOT NULL
WITH r LIMIT $batch
DELETE r
RETURN count(*) AS deleted
