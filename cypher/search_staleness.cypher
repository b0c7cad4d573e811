// name: search.staleness
// params: tenant_id, episode_ids, pairs, as_of, known_at
// mode: read
// What one staleness check reads (graph.retrieval.stale), in one query: every version
// known at $known_at on the timelines the episodes asserted on (the ledger's assertions
// are indexed by episode), then every version of the page's (subject, predicate) pairs
// that those do not cover (a single-valued timeline is its whole pair), as
// graph.retrieval.port.uncovered computes them. Each version comes as the few fields the
// check uses (graph.retrieval.port.HeldVersion), with "valid at $as_of" computed here: a
// check over an episode that sourced a bulk write reads thousands, and whole versions
// cost the driver ~60 us each to unpack. The episodes' records come too
// (search.episodes_by_id): search.gather_expansion returns only the ids of the episodes a
// search ranks, and these are the ones it shows.
CALL () {
  MATCH (a:Assertion {tenant_id: $tenant_id})
  WHERE a.source_episode_id IN $episode_ids
  WITH DISTINCT a.timeline_key AS key
  MATCH ()-[r:FACT]->()
  WHERE r.tenant_id = $tenant_id AND r.timeline_key = key
    AND r.recorded_at <= $known_at AND (r.retired_at IS NULL OR r.retired_at > $known_at)
  RETURN collect(
// include: held_version
  ) AS around
}
WITH around, [v IN around WHERE v[6] | [v[1], v[2]]] AS covered
WITH around, [p IN $pairs WHERE NOT p IN covered] AS pairs
CALL (pairs) {
  UNWIND pairs AS pair
  MATCH (:Entity {tenant_id: $tenant_id, entity_id: pair[0]})-[r:FACT]->()
  WHERE r.tenant_id = $tenant_id AND r.predicate = pair[1]
    AND r.recorded_at <= $known_at AND (r.retired_at IS NULL OR r.retired_at > $known_at)
  RETURN collect(
// include: held_version
  ) AS versions
}
CALL () {
  UNWIND $episode_ids AS id
  MATCH (e:Episode {tenant_id: $tenant_id, episode_id: id})
  WHERE e.recorded_at <= $known_at
  RETURN collect(
// include: episode_fields
  ) AS episodes
}
RETURN around, versions, episodes
