// name: tenant.purge
// params: tenant_id, batch
// mode: write
// One batch of a tenant's nodes (their relationships go with them); the store repeats it
// until nothing is left, so a large tenant never needs one huge transaction. Each branch
// seeks a (tenant_id, ...) index: "IS NOT NULL" on the second property lets the planner
// use a composite index for its prefix.
CALL () {
  MATCH (n:Entity {tenant_id: $tenant_id}) WHERE n.entity_id IS NOT NULL RETURN n
  UNION ALL
  MATCH (n:Value {tenant_id: $tenant_id}) WHERE n.value_key IS NOT NULL RETURN n
  UNION ALL
  MATCH (n:Episode {tenant_id: $tenant_id}) WHERE n.episode_id IS NOT NULL RETURN n
  UNION ALL
  MATCH (n:Assertion {tenant_id: $tenant_id}) WHERE n.timeline_key IS NOT NULL RETURN n
  UNION ALL
  MATCH (n:Timeline {tenant_id: $tenant_id}) WHERE n.key IS NOT NULL RETURN n
  UNION ALL
  MATCH (n:Schema {tenant_id: $tenant_id}) WHERE n.version IS NOT NULL RETURN n
  UNION ALL
  MATCH (n:FactVector {tenant_id: $tenant_id}) WHERE n.fact_id IS NOT NULL RETURN n
  UNION ALL
  MATCH (n:SystemClock {tenant_id: $tenant_id}) RETURN n
}
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted
