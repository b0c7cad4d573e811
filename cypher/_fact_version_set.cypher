// fragment: fact_version_set
// Every property of a new fact version r from its row (graph.stores.neo4j.codec.fact_row).
// Every property is named (a map SET would make the planner buffer all rows), and the
// row's keys for the MATCH differ from the property names, so the planner streams the
// rows instead of buffering them (Eager); a null one is simply not stored. open_key is
// set only on a current open version; current and terms_current only on the version open
// in system time (search filters on them inside the indexes; terms come from
// graph.stores.neo4j.codec.index_terms). Times arrive as text: datetime() here costs less
// than the driver packing DATETIMEs.
SET r.version_id = row.version_id,
    r.fact_id = row.fact_id,
    r.tenant_id = $tenant_id,
    r.timeline_key = row.timeline_key,
    r.subject = row.subject_id,
    r.subject_type = row.subject_type,
    r.predicate = row.predicate,
    r.value_json = row.value_json,
    r.value_type = row.value_type,
    r.object = row.object_id,
    r.object_type = row.object_type,
    r.valid_from = datetime(row.valid_from),
    r.valid_to = datetime(row.valid_to),
    r.recorded_at = datetime(row.recorded_at),
    r.retired_at = datetime(row.retired_at),
    r.source_episode_id = row.source_episode_id,
    r.sources = row.sources,
    r.supersedes = row.supersedes,
    r.confidence = row.confidence,
    r.memory_type = row.memory_type,
    r.schema_version = row.schema_version,
    r.retention_policy = row.retention_policy,
    r.cardinality = row.cardinality,
    r.fact_text = row.fact_text,
    r.open_key = row.open_key,
    r.current = row.retired_at IS NULL,
    r.terms = row.terms,
    r.terms_current = row.terms_current
