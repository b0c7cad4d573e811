// name: search.pending_entities
// params: tenant_id, since, after, model, limit
// mode: read
// Entities created since $since without a vector from $model (search_entity_created),
// after the cursor ($since, $after), as in search.pending_facts.
// Their text: name, aliases and summary, as the SQLite store indexes them.
MATCH (e:Entity)
WHERE e.tenant_id = $tenant_id AND e.created_at >= $since
  AND (e.created_at > $since OR e.entity_id > $after)
  AND (e.embedding_model IS NULL OR e.embedding_model <> $model)
RETURN e.entity_id AS id,
       trim(e.name + ' ' + reduce(s = '', a IN coalesce(e.aliases, []) | s + a + ' ')
            + coalesce(e.summary, '')) AS text,
       e.created_at AS at, e.entity_id AS cursor
ORDER BY e.created_at, e.entity_id
LIMIT $limit
