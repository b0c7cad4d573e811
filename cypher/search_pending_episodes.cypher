// name: search.pending_episodes
// params: tenant_id, since, model, limit
// mode: read
// Episodes recorded since $since without a vector from $model (search_episode_recorded).
MATCH (e:Episode)
WHERE e.tenant_id = $tenant_id AND e.recorded_at >= $since
  AND (e.embedding_model IS NULL OR e.embedding_model <> $model)
RETURN e.episode_id AS id, e.content_text AS text
ORDER BY e.recorded_at, e.episode_id
LIMIT $limit
