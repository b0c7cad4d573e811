// name: transfer.versions
// params: tenant_id, after, limit
// mode: read
// One page of every fact version (retired ones too) after the cursor $after (a version id).
MATCH ()-[r:FACT]->()
WHERE r.tenant_id = $tenant_id AND r.version_id > $after
// include: fact_projection
ORDER BY r.version_id
LIMIT $limit
