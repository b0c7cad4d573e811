// name: search.backfill_nodes
// params: batch
// mode: write
// Migration: give entities and episodes written before the fulltext scope their scope
// token, a batch at a time (the caller repeats until it returns 0).
MATCH (e)
WHERE (e:Entity OR e:Episode) AND e.scope IS NULL AND e.tenant_id IS NOT NULL
WITH e LIMIT $batch
SET e.scope = 't' + replace(replace(e.tenant_id, '_', '_u'), '-', '_h')
RETURN count(e) AS n
