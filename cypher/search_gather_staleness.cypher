// name: search.gather_staleness
// params: tenant_id, episode_ids, pairs, known_at
// mode: read
// The staleness check of one batch of episodes in one query: search.facts_sourced_by of
// the episodes (every version on the timelines they asserted on), then
// search.timeline_versions of the page's (subject, predicate) pairs that those versions
// do not already cover (a single-valued timeline is its whole pair), as
// graph.retrieval.stale computes them. Each version read for a pair comes with that pair,
// and the pairs read are returned: the caller answers only what they cover from here.
// The episodes themselves come too (search.episodes_by_id): search.gather_expansion
// returns only the ids of the episodes a search ranks, and these are the ones it shows.
CALL () {
  MATCH (a:Assertion {tenant_id: $tenant_id})
  WHERE a.source_episode_id IN $episode_ids
  WITH DISTINCT a.timeline_key AS key
  MATCH ()-[r:FACT]->()
  WHERE r.tenant_id = $tenant_id AND r.timeline_key = key
    AND r.recorded_at <= $known_at AND (r.retired_at IS NULL OR r.retired_at > $known_at)
  RETURN collect(
// include: fact_fields
  ) AS around
}
WITH around, [f IN around WHERE f.cardinality = 'one' | [f.subject, f.predicate]] AS covered
WITH around, [p IN $pairs WHERE NOT p IN covered] AS pairs
CALL (pairs) {
  UNWIND pairs AS pair
  MATCH (:Entity {tenant_id: $tenant_id, entity_id: pair[0]})-[r:FACT]->()
  WHERE r.tenant_id = $tenant_id AND r.predicate = pair[1]
    AND r.recorded_at <= $known_at AND (r.retired_at IS NULL OR r.retired_at > $known_at)
  WITH pair, r ORDER BY r.valid_from
  RETURN collect([pair,
// include: fact_fields
  ]) AS versions
}
CALL () {
  UNWIND $episode_ids AS id
  MATCH (e:Episode {tenant_id: $tenant_id, episode_id: id})
  WHERE e.recorded_at <= $known_at
  RETURN collect(
// include: episode_fields
  ) AS episodes
}
RETURN around, pairs, versions, episodes
