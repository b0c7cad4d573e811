// fragment: fact_projection
// One fact version, bound to r, as graph.stores.neo4j.codec.fact_from_props reads it:
// every property but the embedding (384 floats), times as RFC 3339 text (the Python
// driver unpacks DATETIME values ~10x slower).
RETURN r {.*,
  valid_from: toString(r.valid_from), valid_to: toString(r.valid_to),
  recorded_at: toString(r.recorded_at), retired_at: toString(r.retired_at),
  embedding: null} AS fact
