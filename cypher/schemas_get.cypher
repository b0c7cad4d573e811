// name: schemas.get
// params: tenant_id
// mode: read
MATCH (s:Schema {tenant_id: $tenant_id})
WHERE s.version IS NOT NULL
RETURN s.body_json AS body_json
ORDER BY s.version DESC
LIMIT 1
