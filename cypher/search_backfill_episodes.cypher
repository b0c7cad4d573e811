// name: search.backfill_episodes
// params: tenant_id, after, batch
// mode: read
// Migration: the tenant's next episodes after $after, in episode id order through the
// (tenant_id, episode_id) index, each with its fulltext text when it has no terms yet; the
// caller writes those (search.set_node_terms) and goes on after the last id returned.
MATCH (e:Episode)
USING INDEX e:Episode(tenant_id, episode_id)
WHERE e.tenant_id = $tenant_id AND e.episode_id > $after
WITH e
ORDER BY e.episode_id
LIMIT $batch
RETURN e.episode_id AS key, elementId(e) AS node, e.terms IS NULL AS missing,
       coalesce(e.content_text, '') AS text
