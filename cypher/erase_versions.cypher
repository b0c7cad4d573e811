// name: erase.versions
// params: tenant_id, keys
// mode: read
// Every version of each timeline, at every system time (retired ones too): what a forget
// dry run reads of a timeline before it works on it in memory (graph.erasure.Preview).
UNWIND $keys AS key
MATCH ()-[r:FACT {tenant_id: $tenant_id, timeline_key: key}]->()
USING INDEX r:FACT(tenant_id, timeline_key)
// include: fact_projection
ORDER BY r.valid_from
