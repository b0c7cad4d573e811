// name: retention.tenants
// params:
// mode: read
// Every tenant with a schema: only a schema sets a retention. Administrative: it reads
// across tenants by design, and answers tenant ids only.
MATCH (s:Schema)
WHERE s.tenant_id IS NOT NULL
RETURN DISTINCT s.tenant_id AS tenant_id
ORDER BY tenant_id
