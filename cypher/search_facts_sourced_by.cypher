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
// Named properties only: not the embedding (384 floats) nor anything added later.
RETURN r {.tenant_id, .fact_id, .version_id, .subject, .subject_type, .predicate, .value_json, .value_type, .object, .object_type, .valid_from, .valid_to, .recorded_at, .retired_at, .source_episode_id, .sources, .supersedes, .confidence, .memory_type, .schema_version, .retention_policy, .cardinality} AS fact
