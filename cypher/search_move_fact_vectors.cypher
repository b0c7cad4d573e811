// name: search.move_fact_vectors
// params: after, batch
// mode: write
// Migration, one batch of versions after the cursor $after (a version id): the vector a
// version carried becomes its fact's FactVector (the first one met; every version of a
// fact has the same sentence), live if any version is open, and leaves the version. The
// last version id of the batch is the next cursor; null when none is left.
MATCH ()-[r:FACT]->()
WHERE r.version_id > $after
WITH r
ORDER BY r.version_id
LIMIT $batch
CALL (r) {
  WITH r
  WHERE r.embedding IS NOT NULL
  MERGE (v:FactVector {tenant_id: r.tenant_id, fact_id: r.fact_id})
    ON CREATE SET v.embedding = r.embedding, v.embedding_model = r.embedding_model,
                  v.live = false, v.scope = r.tenant_id + ' ' + r.embedding_model
  SET v.live = v.live OR coalesce(r.current, false)
  SET v.live_scope = CASE WHEN v.live THEN v.scope END
  REMOVE r.embedding, r.embedding_model
}
RETURN max(r.version_id) AS last
