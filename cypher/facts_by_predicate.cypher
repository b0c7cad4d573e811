// name: facts.by_predicate
// params: tenant_id, predicate, memory_type, source_episode_id, as_of, known_at, after, limit
// mode: read
// Facts of one predicate across the tenant, a page at a time: read in the order of
// fact_predicate_subject (tenant_id, predicate, subject, fact_id) from the cursor's
// subject on, until the page fills. The equality properties lead the ORDER BY so that
// the planner reads the index's order; by fact_predicate every version of the predicate
// was read and sorted for each page.
MATCH ()-[r:FACT]->()
USING INDEX r:FACT(tenant_id, predicate, subject, fact_id)
WHERE r.tenant_id = $tenant_id AND r.predicate = $predicate
  AND r.subject >= coalesce($after[0], '') AND r.fact_id IS NOT NULL
  // No OR over r's properties (coalesce and CASE instead): the planner may split such an
  // OR into a union of index seeks (Distinct), losing the index's order, and then sort
  // every version of the predicate (seen in the full suite, and with other statistics).
  AND r.recorded_at <= $known_at AND coalesce(r.retired_at > $known_at, true)
  AND ($as_of IS NULL OR (r.valid_from <= $as_of AND coalesce(r.valid_to > $as_of, true)))
  AND ($memory_type IS NULL OR r.memory_type = $memory_type)
  AND ($source_episode_id IS NULL OR $source_episode_id IN r.sources)
  // keyset cursor: strictly after (subject, predicate, fact_id)
  AND CASE
        WHEN $after IS NULL THEN true
        WHEN r.subject <> $after[0] THEN r.subject > $after[0]
        WHEN r.predicate <> $after[1] THEN r.predicate > $after[1]
        ELSE r.fact_id > $after[2]
      END
// include: fact_projection
ORDER BY r.tenant_id, r.predicate, r.subject, r.fact_id
LIMIT $limit
