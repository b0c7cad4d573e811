// name: ledger.write_batch
// params: tenant_id, entities, retire, retired_at, lock_entities, values, relations, literals, assertions, episodes, mentions
// mode: write
// Every mutation a ledger write decided on, in one round trip (graph/stores/neo4j/store.py
// buffers them): each unit subquery below runs once, in this order, which is the order the
// ledger calls them in and the one global lock order: entities (upserted, then the other
// ends of new versions) → values → episodes. Timelines were locked before the ledger
// decided (ledger.lock_timelines).
// The batch's entities, sorted by id: created, or given their (new) type. Writing the
// type also holds each one's write lock, in the one global order, before the versions,
// episodes and mentions that touch them. The type becomes a label too (:Entity:Customer):
// a dynamic label from a parameter, never text formatted into the query, and the store
// checks it against the type-name pattern first. Set within ON CREATE / ON MATCH, it
// costs one Merge operator per row; a SET after the MERGE made the planner buffer every
// row (Eager) and write each entity twice.
CALL () {
  UNWIND $entities AS row
  MERGE (e:Entity {tenant_id: $tenant_id, entity_id: row.entity_id})
    ON CREATE SET
      e.name = row.name,
      e.aliases = row.aliases,
      e.summary = row.summary,
      e.created_at = datetime(row.created_at),
      e.terms = row.terms,
      e.entity_type = row.entity_type,
      e:$(row.entity_type)
    ON MATCH SET e.entity_type = row.entity_type, e:$(row.entity_type)
}
// Versions closed in system time; dropping open_key frees the timeline's open slot for
// the version that replaces it below; current and terms_current go too, so the search
// indexes stop offering it for the present.
CALL () {
  UNWIND $retire AS vid
  MATCH ()-[r:FACT {version_id: vid}]->()
  USING INDEX r:FACT(version_id)
  WHERE r.tenant_id = $tenant_id AND r.retired_at IS NULL
  SET r.retired_at = $retired_at, r.current = false
  REMOVE r.open_key, r.terms_current
}
// End nodes of new versions not locked above, sorted (see ledger.lock_entities).
CALL () {
  UNWIND $lock_entities AS id
  MATCH (e:Entity {tenant_id: $tenant_id, entity_id: id})
  SET e._lock = true
  REMOVE e._lock
}
// Value nodes of new literal versions, created if new and locked, sorted by value_key.
CALL () {
  UNWIND $values AS row
  MERGE (v:Value {tenant_id: $tenant_id, value_key: row.value_key})
    ON CREATE SET v.value = row.value, v.value_type = row.value_type
  SET v._lock = true
  REMOVE v._lock
}
CALL () {
  UNWIND $relations AS row
  MATCH (s:Entity {tenant_id: $tenant_id, entity_id: row.subject_id})
  MATCH (o:Entity {tenant_id: $tenant_id, entity_id: row.object_id})
  CREATE (s)-[r:FACT]->(o)
  // include: fact_version_set
}
CALL () {
  UNWIND $literals AS row
  MATCH (s:Entity {tenant_id: $tenant_id, entity_id: row.subject_id})
  MATCH (v:Value {tenant_id: $tenant_id, value_key: row.value_key})
  CREATE (s)-[r:FACT]->(v)
  // include: fact_version_set
}
// Ledger entries, one node each; times arrive as text: datetime() here costs less than
// the Python driver packing DATETIME values.
CALL () {
  UNWIND $assertions AS row
  CREATE (a:Assertion)
  SET a.tenant_id = $tenant_id,
      a.timeline_key = row.timeline_key,
      a.seq = row.seq,
      a.kind = row.kind,
      a.fact_id = row.fact_id,
      a.recorded_at = datetime(row.recorded_at),
      a.valid_from = datetime(row.valid_from),
      a.valid_to = datetime(row.valid_to),
      a.source_episode_id = row.source_episode_id,
      a.payload = row.payload
}
// A fact's vector is offered for the present while the fact has a version open in system
// time (FactVector.live, search.vector_facts): the facts of the versions retired and
// inserted above are settled again (a cut retires a version and inserts its successor:
// nothing changes, no index is updated).
CALL () {
  CALL () {
    UNWIND $retire AS vid
    MATCH ()-[r:FACT {version_id: vid}]->()
    USING INDEX r:FACT(version_id)
    RETURN r.fact_id AS id
    UNION
    UNWIND $relations + $literals AS row
    RETURN row.fact_id AS id
  }
  WITH id
  ORDER BY id
  // include: settle_fact_vectors
}
// Episodes last in the lock order, sorted, then the mentions (the entities are locked
// above, or by the MERGE of the mention itself).
CALL () {
  UNWIND $episodes AS id
  MATCH (e:Episode {tenant_id: $tenant_id, episode_id: id})
  SET e._lock = true
  REMOVE e._lock
}
CALL () {
  UNWIND $mentions AS pair
  MATCH (ep:Episode {tenant_id: $tenant_id, episode_id: pair.episode_id})
  MATCH (en:Entity {tenant_id: $tenant_id, entity_id: pair.entity_id})
  MERGE (ep)-[m:MENTIONS]->(en)
    ON CREATE SET m.tenant_id = $tenant_id
}
