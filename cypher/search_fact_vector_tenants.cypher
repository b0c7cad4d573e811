// name: search.fact_vector_tenants
// params:
// mode: read
// Migration: the tenants with a FactVector written before its index filter properties
// (scope, live_scope). Reads every FactVector once; the batches after it walk one
// tenant's nodes through the fact_vector_id constraint's index.
MATCH (v:FactVector)
WHERE v.scope IS NULL AND v.tenant_id IS NOT NULL
RETURN DISTINCT v.tenant_id AS tenant_id
