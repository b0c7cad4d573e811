// name: facts.by_tenant
// params: tenant_id, memory_type, source_episode_id, as_of, known_at, after, limit
// mode: read
// Every fact of the tenant; also the fallback for an episode that no longer exists (its
// ledger entries are gone, but old versions in system time still cite it).
MATCH ()-[r:FACT {tenant_id: $tenant_id}]->()
WHERE r.predicate IS NOT NULL
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
