// name: queue.purge
// params: tenant_id
// mode: write
// A tenant's pending and merge candidates (tenant.purge removes its episodes).
// One label at a time, each read by its tenant prefix: a label disjunction was planned as
// a scan of every node of every tenant.
CALL () {
  MATCH (n:ExtractionCandidate {tenant_id: $tenant_id})
  USING INDEX n:ExtractionCandidate(tenant_id, candidate_id)
  WHERE n.candidate_id IS NOT NULL
  DETACH DELETE n
}
CALL () {
  MATCH (n:MergeCandidate {tenant_id: $tenant_id})
  USING INDEX n:MergeCandidate(tenant_id, candidate_id)
  WHERE n.candidate_id IS NOT NULL
  DETACH DELETE n
}
CALL () {
  MATCH (n:CandidateStatement {tenant_id: $tenant_id})
  USING INDEX n:CandidateStatement(tenant_id, statement_key)
  WHERE n.statement_key IS NOT NULL
  DETACH DELETE n
}
