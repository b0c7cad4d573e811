// fragment: entity_fields
// One entity, bound to e, for the read path, as a map expression: the properties that
// graph.stores.neo4j.codec.entity_from_props reads; the time as text (see fact_fields).
e {.entity_id, .entity_type, .name, .aliases, .summary, created_at: toString(e.created_at)}
