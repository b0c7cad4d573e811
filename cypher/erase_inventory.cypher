// name: erase.inventory
// params: tenant_id, keys
// mode: read
// What some timelines hold at every system time: their versions and ledger entries.
CALL () {
  UNWIND $keys AS key
  MATCH ()-[r:FACT {tenant_id: $tenant_id, timeline_key: key}]->()
  RETURN collect([r.version_id, r.fact_id]) AS versions
}
CALL () {
  UNWIND $keys AS key
  MATCH (a:Assertion {tenant_id: $tenant_id, timeline_key: key})
  RETURN count(a) AS assertions
}
RETURN versions, assertions
