// name: ledger.current_fact
// params: tenant_id, fact_id
// mode: read
MATCH ()-[r:FACT {fact_id: $fact_id}]->()
USING INDEX r:FACT(fact_id)
WHERE r.tenant_id = $tenant_id AND r.retired_at IS NULL
// include: fact_projection
