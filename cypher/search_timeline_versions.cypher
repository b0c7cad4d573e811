// name: search.timeline_versions
// params: tenant_id, pairs, known_at
// mode: read
// Every version known at $known_at of these (subject, predicate) timelines.
UNWIND $pairs AS pair
MATCH (:Entity {tenant_id: $tenant_id, entity_id: pair[0]})-[r:FACT]->()
WHERE r.tenant_id = $tenant_id AND r.predicate = pair[1]
  AND r.recorded_at <= $known_at AND (r.retired_at IS NULL OR r.retired_at > $known_at)
// Named properties only: not the embedding (384 floats) nor anything added later.
RETURN r {.tenant_id, .fact_id, .version_id, .subject, .subject_type, .predicate, .value_json, .value_type, .object, .object_type, .valid_from, .valid_to, .recorded_at, .retired_at, .source_episode_id, .sources, .supersedes, .confidence, .memory_type, .schema_version, .retention_policy, .cardinality} AS fact
ORDER BY r.valid_from
