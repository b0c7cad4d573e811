// name: queue.candidates_hold
// params: tenant_id, episode_id, statement_key, props, supporting
// mode: write
// Holders of one statement are serialised on its CandidateStatement node, so the support
// each of them counts includes every supporter committed before it: two episodes that
// reach the threshold together cannot both count one.
MERGE (s:CandidateStatement {tenant_id: $tenant_id, statement_key: $statement_key})
SET s.queue_lock = true
REMOVE s.queue_lock
MERGE (k:ExtractionCandidate
       {tenant_id: $tenant_id, episode_id: $episode_id, statement_key: $statement_key})
  ON CREATE SET k += $props
WITH k
CALL (k) {
  MATCH (o:ExtractionCandidate {tenant_id: $tenant_id, statement_key: $statement_key})
  WHERE o.status IN $supporting
  RETURN count(DISTINCT o.episode_id) AS support
}
RETURN properties(k) AS candidate, support
