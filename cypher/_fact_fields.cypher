// fragment: fact_fields
// One fact version, bound to r, for the read path, as a map expression (a template writes
// RETURN or collect() around it): the named properties that
// graph.stores.neo4j.codec.fact_from_props reads, not the embedding (384 floats) nor
// anything added later. Times as RFC 3339 text: the Python driver unpacks a DATETIME
// about 100x slower than a string, and a search reads hundreds of versions.
r {.tenant_id, .fact_id, .version_id, .subject, .subject_type, .predicate,
  .value_json, .value_type, .object, .object_type,
  valid_from: toString(r.valid_from), valid_to: toString(r.valid_to),
  recorded_at: toString(r.recorded_at), retired_at: toString(r.retired_at),
  .source_episode_id, .sources, .supersedes, .confidence, .memory_type,
  .schema_version, .retention_policy, .cardinality}
