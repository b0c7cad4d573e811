// name: erase.entity
// params: tenant_id, entity_id, own_keys
// mode: write
// Erase an entity: every version about it at every system time (its fulltext entries go
// with them) and the vectors of those facts (all of a fact's versions are about the same
// entities), the Value nodes no version points at any more, the lock nodes of its own
// timelines, its mentions and the node itself.
CALL () {
  MATCH (:Entity {tenant_id: $tenant_id, entity_id: $entity_id})-[r:FACT]-()
  WHERE r.tenant_id = $tenant_id
  WITH DISTINCT r.fact_id AS id
  MATCH (v:FactVector {tenant_id: $tenant_id, fact_id: id})
  DELETE v
}
CALL () {
  MATCH (:Entity {tenant_id: $tenant_id, entity_id: $entity_id})-[r:FACT]-(o)
  WHERE r.tenant_id = $tenant_id
  WITH DISTINCT r, o
  DELETE r
  WITH DISTINCT o
  WHERE o:Value AND NOT EXISTS { (o)<-[:FACT]-() }
  DELETE o
}
CALL () {
  UNWIND $own_keys AS key
  MATCH (t:Timeline {tenant_id: $tenant_id, key: key})
  DETACH DELETE t
}
CALL () {
  MATCH (e:Entity {tenant_id: $tenant_id, entity_id: $entity_id})
  DETACH DELETE e
}
