// name: search.gather_expansion
// params: tenant_id, fact_ids, top_fact_ids, seed_ids, entity_ids, episode_ids, context_ids, hop, max_facts, max_mentions, radius, as_of, known_at
// mode: read
// One search's expansion and every load its re-rank needs, in one query: each CALL is the
// per-call template of the same name (search.facts_by_id, search.facts_touching for one
// hop from the frontier, search.mentioning, search.mentions_of,
// search.session_neighbors), then the entities they name (search.entities_by_id) and the
// ids of the episodes they name that are visible at $known_at: the ranking needs only
// those, and the few episodes a page shows are loaded by search.staleness, which
// checks them anyway (a search's ~200 episode records were a third of this query's
// cost, most of it in the driver). The frontier is the query's entities
// ($seed_ids) and the endpoints of the visible facts among the best candidates
// ($top_fact_ids). The id lists each load covered are returned too: the caller answers
// only what they cover from here.
CALL () {
  UNWIND $fact_ids AS id
  MATCH ()-[r:FACT]->()
  WHERE r.fact_id = id AND r.tenant_id = $tenant_id
    AND r.valid_from <= $as_of AND (r.valid_to IS NULL OR r.valid_to > $as_of)
    AND r.recorded_at <= $known_at AND (r.retired_at IS NULL OR r.retired_at > $known_at)
  RETURN collect(
// include: fact_fields
  ) AS facts
}
WITH facts, [f IN facts WHERE f.fact_id IN $top_fact_ids] AS top
WITH facts, $seed_ids + [f IN top | f.subject]
  + [f IN top WHERE f.object IS NOT NULL AND f.object <> '' | f.object] AS frontier
CALL (frontier) {
  UNWIND CASE WHEN $hop THEN frontier ELSE [] END AS id
  MATCH (:Entity {tenant_id: $tenant_id, entity_id: id})-[r:FACT]-()
  WHERE r.tenant_id = $tenant_id
    AND r.valid_from <= $as_of AND (r.valid_to IS NULL OR r.valid_to > $as_of)
    AND r.recorded_at <= $known_at AND (r.retired_at IS NULL OR r.retired_at > $known_at)
  WITH DISTINCT r
  ORDER BY r.valid_from DESC, r.fact_id
  LIMIT $max_facts
  RETURN collect(
// include: fact_fields
  ) AS around
}
CALL () {
  UNWIND $seed_ids AS id
  MATCH (:Entity {tenant_id: $tenant_id, entity_id: id})<-[:MENTIONS]-(ep:Episode)
  WHERE ep.tenant_id = $tenant_id AND ep.recorded_at <= $known_at
  WITH ep.episode_id AS episode_id, id AS entity_id, ep.occurred_at AS at
  ORDER BY at DESC, episode_id, entity_id
  LIMIT $max_mentions
  RETURN collect([episode_id, entity_id]) AS mentioning
}
CALL () {
  UNWIND $episode_ids AS id
  MATCH (:Episode {tenant_id: $tenant_id, episode_id: id})-[:MENTIONS]->(en:Entity)
  WHERE en.tenant_id = $tenant_id
  WITH id, en.entity_id AS entity_id
  ORDER BY id, entity_id
  RETURN collect([id, entity_id]) AS mentions
}
CALL () {
  UNWIND CASE WHEN $radius >= 1 THEN $context_ids ELSE [] END AS id
  MATCH (me:Episode {tenant_id: $tenant_id, episode_id: id})
  USING INDEX me:Episode(tenant_id, episode_id)
  WHERE me.session_id IS NOT NULL
  CALL (me) {
    MATCH (o:Episode {tenant_id: $tenant_id, session_id: me.session_id})
    USING INDEX SEEK o:Episode(tenant_id, session_id)
    WHERE o.recorded_at <= $known_at
      AND (o.occurred_at < me.occurred_at
           OR (o.occurred_at = me.occurred_at AND o.recorded_at < me.recorded_at))
    WITH o ORDER BY o.occurred_at DESC, o.recorded_at DESC LIMIT $radius
    WITH collect(o.episode_id) AS ids
    UNWIND range(0, size(ids) - 1) AS i
    RETURN ids[i] AS other, -(i + 1) AS offset
    UNION
    MATCH (o:Episode {tenant_id: $tenant_id, session_id: me.session_id})
    USING INDEX SEEK o:Episode(tenant_id, session_id)
    WHERE o.recorded_at <= $known_at
      AND (o.occurred_at > me.occurred_at
           OR (o.occurred_at = me.occurred_at AND o.recorded_at > me.recorded_at))
    WITH o ORDER BY o.occurred_at, o.recorded_at LIMIT $radius
    WITH collect(o.episode_id) AS ids
    UNWIND range(0, size(ids) - 1) AS i
    RETURN ids[i] AS other, i + 1 AS offset
  }
  RETURN collect([me.episode_id, other, offset]) AS neighbours
}
WITH facts, frontier, around, mentioning, mentions, neighbours,
  $episode_ids + [m IN mentioning | m[0]] + [n IN neighbours | n[1]]
  + reduce(s = [], f IN facts + around | s + coalesce(f.sources, [])
      + CASE WHEN f.source_episode_id IS NULL THEN [] ELSE [f.source_episode_id] END)
  AS episode_scope,
  $entity_ids + $seed_ids + [m IN mentioning | m[1]] + [m IN mentions | m[1]]
  + [f IN facts + around | f.subject]
  + [f IN facts + around WHERE f.object IS NOT NULL | f.object] AS entity_scope
CALL (episode_scope) {
  UNWIND episode_scope AS id
  WITH DISTINCT id
  OPTIONAL MATCH (e:Episode {tenant_id: $tenant_id, episode_id: id})
  WHERE e.recorded_at <= $known_at
  RETURN collect(id) AS episode_ids_read, collect(e.episode_id) AS episodes
}
CALL (entity_scope) {
  UNWIND entity_scope AS id
  WITH DISTINCT id
  OPTIONAL MATCH (e:Entity {tenant_id: $tenant_id, entity_id: id})
  WHERE e.created_at <= $known_at
  RETURN collect(id) AS entity_ids_read, collect(
// include: entity_fields
  ) AS entities
}
RETURN facts, frontier, around, mentioning, mentions, neighbours, episodes, entities,
  episode_ids_read AS episode_scope, entity_ids_read AS entity_scope
