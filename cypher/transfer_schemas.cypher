// name: transfer.schemas
// params: tenant_id
// mode: read
// Every schema version of a tenant, oldest first (a ledger export; a tenant has a few).
MATCH (s:Schema {tenant_id: $tenant_id})
WHERE s.version IS NOT NULL
RETURN s.body_json AS body_json
ORDER BY s.version
