// name: search.facts_by_id
// params: tenant_id, fact_ids, as_of, known_at
// mode: read
// The version of each fact valid at $as_of as known at $known_at (fact_id index).
UNWIND $fact_ids AS id
MATCH ()-[r:FACT]->()
WHERE r.fact_id = id AND r.tenant_id = $tenant_id
  AND r.valid_from <= $as_of AND (r.valid_to IS NULL OR r.valid_to > $as_of)
  AND r.recorded_at <= $known_at AND (r.retired_at IS NULL OR r.retired_at > $known_at)
// Named properties only: not the embedding (384 floats) nor anything added later.
RETURN r {.tenant_id, .fact_id, .version_id, .subject, .subject_type, .predicate, .value_json, .value_type, .object, .object_type, .valid_from, .valid_to, .recorded_at, .retired_at, .source_episode_id, .sources, .supersedes, .confidence, .memory_type, .schema_version, .retention_policy, .cardinality} AS fact
