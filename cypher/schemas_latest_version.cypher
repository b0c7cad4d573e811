// name: schemas.latest_version
// params: tenant_id
// mode: read
OPTIONAL MATCH (s:Schema {tenant_id: $tenant_id})
WHERE s.version IS NOT NULL
RETURN coalesce(max(s.version), 0) AS version
