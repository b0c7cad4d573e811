// fragment: held_version
// One fact version, bound to r, as graph.retrieval.port.HeldVersion (the staleness
// check's fields, in its order), valid time checked here against $as_of.
[r.fact_id, r.subject, r.predicate, r.object, r.value_json,
  r.valid_from <= $as_of AND (r.valid_to IS NULL OR r.valid_to > $as_of),
  r.cardinality = 'one', r.sources]
