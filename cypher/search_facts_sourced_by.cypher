// name: search.facts_sourced_by
// params: tenant_id, episode_ids, known_at
// mode: read
// Every version known at $known_at on the timelines these episodes asserted on (the
// ledger's assertions are indexed by episode): those citing them and their neighbours.
MATCH (a:Assertion {tenant_id: $tenant_id})
WHERE a.source_episode_id IN $episode_ids
WITH DISTINCT a.timeline_key AS key
MATCH ()-[r:FACT]->()
WHERE r.tenant_id = $tenant_id AND r.timeline_key = key
  AND r.recorded_at <= $known_at AND (r.retired_at IS NULL OR r.retired_at > $known_at)
RETURN
// include: fact_fields
AS fact
