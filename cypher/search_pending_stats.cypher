// name: search.pending_stats
// params: since, model
// mode: read
// Per tenant and kind: items recorded since $since without a vector from $model, and when
// the first of them was recorded (search.pending_setup's indexes). The indexer's work list
// and the index-lag figures; it lists tenants, it reads no item's content.
MATCH ()-[r:FACT]->()
USING INDEX r:FACT(recorded_at)
WHERE r.recorded_at >= $since
  AND NOT EXISTS {
    MATCH (v:FactVector {tenant_id: r.tenant_id, fact_id: r.fact_id})
    WHERE v.embedding_model = $model
  }
WITH r.tenant_id AS tenant_id, r.fact_id AS fact_id, min(r.recorded_at) AS first
RETURN tenant_id, 'fact' AS kind, count(*) AS n, min(first) AS oldest
UNION ALL
MATCH (e:Episode)
USING INDEX e:Episode(recorded_at)
WHERE e.recorded_at >= $since
  AND (e.embedding_model IS NULL OR e.embedding_model <> $model)
RETURN e.tenant_id AS tenant_id, 'episode' AS kind, count(*) AS n, min(e.recorded_at) AS oldest
UNION ALL
MATCH (e:Entity)
USING INDEX e:Entity(created_at)
WHERE e.created_at >= $since
  AND (e.embedding_model IS NULL OR e.embedding_model <> $model)
RETURN e.tenant_id AS tenant_id, 'entity' AS kind, count(*) AS n, min(e.created_at) AS oldest
