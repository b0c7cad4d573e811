// name: search.pending_episodes
// params: tenant_id, since, after, model, limit
// mode: read
// Episodes recorded since $since without a vector from $model (search_episode_recorded),
// after the cursor ($since, $after), as in search.pending_facts.
MATCH (e:Episode)
WHERE e.tenant_id = $tenant_id AND e.recorded_at >= $since
  AND (e.recorded_at > $since OR e.episode_id > $after)
  AND (e.embedding_model IS NULL OR e.embedding_model <> $model)
RETURN e.episode_id AS id, e.content_text AS text, e.recorded_at AS at,
       e.episode_id AS cursor
ORDER BY e.recorded_at, e.episode_id
LIMIT $limit
