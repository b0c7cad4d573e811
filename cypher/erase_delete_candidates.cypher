// name: erase.delete_candidates
// params: tenant_id, candidate_ids, merge_ids
// mode: write
// Review candidates by id; a statement node no candidate cites any more goes too (its
// key names the statement's subject and object).
CALL () {
  MATCH (k:ExtractionCandidate {tenant_id: $tenant_id})
  WHERE k.candidate_id IN $candidate_ids
  WITH k, k.statement_key AS key
  DETACH DELETE k
  WITH DISTINCT key
  MATCH (s:CandidateStatement {tenant_id: $tenant_id, statement_key: key})
  WHERE NOT EXISTS {
    MATCH (o:ExtractionCandidate {tenant_id: $tenant_id, statement_key: key})
    WHERE o.episode_id IS NOT NULL
  }
  DETACH DELETE s
}
CALL () {
  MATCH (m:MergeCandidate {tenant_id: $tenant_id})
  WHERE m.candidate_id IN $merge_ids
  DETACH DELETE m
}
