// fragment: fact_fields
// One fact version, bound to r, for the read path, as a map expression (a template writes
// RETURN or collect() around it): the named properties that
// graph.stores.neo4j.codec.fact_from_props reads, not the embedding (384 floats) nor
// anything added later.
r {.tenant_id, .fact_id, .version_id, .subject, .subject_type, .predicate,
  .value_json, .value_type, .object, .object_type, .valid_from, .valid_to, .recorded_at,
  .retired_at, .source_episode_id, .sources, .supersedes, .confidence, .memory_type,
  .schema_version, .retention_policy, .cardinality}
