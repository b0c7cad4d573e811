// name: facts.by_source
// params: tenant_id, memory_type, source_episode_id, as_of, known_at, after, limit
// mode: read
// Facts citing one episode. Every version that lists an episode among its sources lies on
// a timeline where that episode has a ledger entry, so the Assertion index finds them.
MATCH (a:Assertion {tenant_id: $tenant_id, source_episode_id: $source_episode_id})
WITH DISTINCT a.timeline_key AS key
MATCH ()-[r:FACT {tenant_id: $tenant_id, timeline_key: key}]->()
USING INDEX r:FACT(tenant_id, timeline_key)
WHERE true
  AND r.recorded_at <= $known_at AND (r.retired_at IS NULL OR r.retired_at > $known_at)
  AND ($as_of IS NULL OR (r.valid_from <= $as_of AND (r.valid_to IS NULL OR r.valid_to > $as_of)))
  AND ($memory_type IS NULL OR r.memory_type = $memory_type)
  AND ($source_episode_id IS NULL OR $source_episode_id IN r.sources)
  // keyset cursor: strictly after (subject, predicate, fact_id)
  AND ($after IS NULL OR r.subject > $after[0]
       OR (r.subject = $after[0] AND (r.predicate > $after[1]
           OR (r.predicate = $after[1] AND r.fact_id > $after[2]))))
// include: fact_projection
ORDER BY r.subject, r.predicate, r.fact_id
LIMIT $limit
