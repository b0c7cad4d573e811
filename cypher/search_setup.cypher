// name: search.setup
// params:
// mode: write
// Indexes of the read path, beside schema.setup's fulltext and vector indexes; created on
// first use of search (idempotent). Embedding new items seeks items recorded since a
// watermark; session context seeks an episode's neighbours in its session.
CREATE INDEX search_episode_recorded IF NOT EXISTS
FOR (e:Episode) ON (e.tenant_id, e.recorded_at);
CREATE INDEX search_entity_created IF NOT EXISTS
FOR (e:Entity) ON (e.tenant_id, e.created_at);
CREATE INDEX search_episode_session IF NOT EXISTS
FOR (e:Episode) ON (e.tenant_id, e.session_id);
CALL db.awaitIndexes(300)
