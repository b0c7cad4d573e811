// name: search.backfill_facts
// params: batch
// mode: write
// Migration: give fact versions written before the search filters their scope and
// current flags, a batch at a time (the caller repeats until it returns 0).
MATCH ()-[r:FACT]->()
WHERE r.scope IS NULL
WITH r LIMIT $batch
SET r.current = r.retired_at IS NULL,
    r.scope = 't' + replace(replace(r.tenant_id, '_', '_u'), '-', '_h'),
    r.scope_current = CASE WHEN r.retired_at IS NULL
      THEN 't' + replace(replace(r.tenant_id, '_', '_u'), '-', '_h') END
RETURN count(r) AS n
