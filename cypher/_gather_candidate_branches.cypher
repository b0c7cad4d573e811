// fragment: gather_candidate_branches
// The branches of search.gather_candidates(_past) that do not depend on the window's
// system time: BM25 over facts, entities and episodes (each $..._query names only the
// tenant's own terms; null skips the branch), nearest entities and episodes (null
// $vector skips them). Each branch is its per-kind template (search.fulltext_*,
// search.vector_*) with the kind and signal added.
  WITH $fact_query AS q WHERE q IS NOT NULL
  CALL db.index.fulltext.queryRelationships('fact_text', q, {limit: $fetch})
  YIELD relationship AS r, score
  RETURN 'fact' AS kind, 'bm25' AS signal, r.fact_id AS item_id, score,
         coalesce(r.tenant_id = $tenant_id
           AND r.valid_from <= $as_of AND (r.valid_to IS NULL OR r.valid_to > $as_of)
           AND r.recorded_at <= $known_at
           AND (r.retired_at IS NULL OR r.retired_at > $known_at), false) AS ok
  UNION ALL
  WITH $entity_query AS q WHERE q IS NOT NULL
  CALL db.index.fulltext.queryNodes('entity_text', q, {limit: $fetch})
  YIELD node AS e, score
  RETURN 'entity' AS kind, 'bm25' AS signal, e.entity_id AS item_id, score,
         coalesce(e.tenant_id = $tenant_id AND e.created_at <= $known_at, false) AS ok
  UNION ALL
  WITH $episode_query AS q WHERE q IS NOT NULL
  CALL db.index.fulltext.queryNodes('episode_text', q, {limit: $fetch})
  YIELD node AS e, score
  RETURN 'episode' AS kind, 'bm25' AS signal, e.episode_id AS item_id, score,
         coalesce(e.tenant_id = $tenant_id AND e.recorded_at <= $known_at, false) AS ok
  UNION ALL
  WITH $vector AS v WHERE v IS NOT NULL
  MATCH (e:Entity)
    SEARCH e IN (VECTOR INDEX entity_embedding FOR v
      WHERE e.tenant_id = $tenant_id AND e.embedding_model = $model
      LIMIT $fetch) SCORE AS score
  RETURN 'entity' AS kind, 'vector' AS signal, e.entity_id AS item_id, score,
         coalesce(e.created_at <= $known_at, false) AS ok
  UNION ALL
  WITH $vector AS v WHERE v IS NOT NULL
  MATCH (e:Episode)
    SEARCH e IN (VECTOR INDEX episode_embedding FOR v
      WHERE e.tenant_id = $tenant_id AND e.embedding_model = $model
      LIMIT $fetch) SCORE AS score
  RETURN 'episode' AS kind, 'vector' AS signal, e.episode_id AS item_id, score,
         coalesce(e.recorded_at <= $known_at, false) AS ok
