// name: ledger.delete_episode_data
// params: tenant_id, episode_id
// mode: write
// Really delete an episode: every fact version whose only source it is (at every system
// time; the ledger then re-inserts the repaired timeline), its ledger entries, its
// mentions, the node itself, the Value nodes no fact points at any more, and the vectors
// of facts left without a version.
// Deleting a relationship locks its end nodes: the store locks them in the global order
// first (ledger.doomed_endpoints, then ledger.lock_*).
CALL () {
  MATCH ()-[r:FACT {tenant_id: $tenant_id, source_episode_id: $episode_id}]->(o)
  USING INDEX r:FACT(tenant_id, source_episode_id)
  WHERE r.sources = [$episode_id]
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
  MATCH (a:Assertion {tenant_id: $tenant_id, source_episode_id: $episode_id})
  DELETE a
}
CALL () {
  MATCH (e:Episode {tenant_id: $tenant_id, episode_id: $episode_id})
  DETACH DELETE e
}
