// name: retention.purge_versions
// params: tenant_id, keys, before, facts
// mode: write
// On these timelines: versions retired in system time whose validity ended before
// $before; every version and ledger entry of the (key, fact_id) pairs $facts; the Value
// nodes no version points at any more; and the vectors of facts left without a version.
CALL () {
  CALL () {
    UNWIND $keys AS key
    MATCH ()-[r:FACT {tenant_id: $tenant_id, timeline_key: key}]->(o)
    WHERE r.valid_to < $before AND r.retired_at IS NOT NULL
    RETURN r, o
    UNION
    UNWIND $facts AS row
    MATCH ()-[r:FACT {tenant_id: $tenant_id, timeline_key: row.key}]->(o)
    WHERE r.fact_id = row.fact_id
    RETURN r, o
  }
  WITH DISTINCT r, o
  WITH r, o, r.fact_id AS fid
  DELETE r
  WITH collect(DISTINCT o) AS ends, collect(DISTINCT fid) AS ids
  CALL (ends) {
    UNWIND ends AS o
    WITH o
    WHERE o:Value AND NOT EXISTS { (o)<-[:FACT]-() }
    DELETE o
  }
  UNWIND ids AS id
  WITH id
  ORDER BY id
  // include: settle_fact_vectors
}
CALL () {
  UNWIND $facts AS row
  MATCH (a:Assertion {tenant_id: $tenant_id, timeline_key: row.key})
  WHERE a.fact_id = row.fact_id
  DELETE a
}
