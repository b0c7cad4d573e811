// fragment: settle_fact_vectors
// One row per fact id (id), in id order: the order FactVector nodes are locked in here, in
// ledger.write_batch and in search.set_fact_vectors. Each fact's vector after its versions
// changed: gone when no version is left, else live while one is open in system time,
// written only where that changed (an unchanged value updates no index).
  MATCH (v:FactVector {tenant_id: $tenant_id, fact_id: id})
  WITH v,
       EXISTS { MATCH ()-[r:FACT {fact_id: id}]->() WHERE r.tenant_id = $tenant_id } AS held,
       EXISTS {
         MATCH ()-[r:FACT {fact_id: id}]->() WHERE r.tenant_id = $tenant_id AND r.current = true
       } AS live
  CALL (v, held, live) {
    WITH * WHERE held AND v.live <> live
    SET v.live = live, v.live_scope = CASE WHEN live THEN v.scope END
  }
  CALL (v, held) {
    WITH * WHERE NOT held
    DELETE v
  }
