// fragment: episode_fields
// One episode, bound to e, for the read path, as a map expression: the properties that
// graph.stores.neo4j.codec.episode_from_props reads, not the embedding nor the indexed
// text; times as text (see fact_fields).
e {.tenant_id, .episode_id, .kind, .source, .content_json, .content_hash,
  occurred_at: toString(e.occurred_at), .session_id, .metadata_json,
  recorded_at: toString(e.recorded_at), .status, .attempts, .last_error, .rejected_json}
