// name: search.fact_vectors
// params: tenant_id, fact_ids, model
// mode: read
// A vector already made for each fact (any version): a cut interval's new versions have
// the sentence of the old one, so they take its vector instead of running the model.
UNWIND $fact_ids AS id
CALL (id) {
  MATCH ()-[r:FACT]->()
  WHERE r.fact_id = id AND r.tenant_id = $tenant_id AND r.embedding_model = $model
  RETURN r.embedding AS embedding
  LIMIT 1
}
RETURN id AS fact_id, embedding
