// name: search.pending_setup
// params:
// mode: write
// Indexes for the indexer's work list across tenants (search.pending_stats): what was
// recorded since an instant, of any tenant. Created on first use (idempotent).
CREATE INDEX search_fact_recorded_any IF NOT EXISTS
FOR ()-[r:FACT]-() ON (r.recorded_at);
CREATE INDEX search_episode_recorded_any IF NOT EXISTS
FOR (e:Episode) ON (e.recorded_at);
CREATE INDEX search_entity_created_any IF NOT EXISTS
FOR (e:Entity) ON (e.created_at);
CALL db.awaitIndexes(300)
