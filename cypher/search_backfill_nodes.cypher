// name: search.backfill_nodes
// params: batch
// mode: read
// Migration: entities and episodes without fulltext terms (written before them), a batch
// at a time; the caller writes their terms (search.set_node_terms), so each batch finds
// the next ones.
MATCH (e)
WHERE (e:Entity OR e:Episode) AND e.terms IS NULL AND e.tenant_id IS NOT NULL
RETURN elementId(e) AS node, e.tenant_id AS tenant_id,
       CASE WHEN e:Entity
         THEN reduce(s = coalesce(e.name, ''), a IN coalesce(e.aliases, []) | s + ' ' + a)
         ELSE coalesce(e.content_text, '') END AS text
LIMIT $batch
