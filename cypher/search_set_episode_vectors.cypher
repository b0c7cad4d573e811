// name: search.set_episode_vectors
// params: tenant_id, rows, model
// mode: write
// Only if the text is still the one embedded (an episode's content never changes, but a
// deleted and re-created episode may carry another).
UNWIND $rows AS row
MATCH (e:Episode {tenant_id: $tenant_id, episode_id: row.id})
WHERE e.content_text = row.text
SET e.embedding = row.vector, e.embedding_model = $model
