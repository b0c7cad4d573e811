// name: queue.candidates_promote
// params: tenant_id, statement_key, now
// mode: write
// Flip the statement's pending candidates to promoted under the statement's lock: a
// concurrent promoter waits, then finds none pending, so the fact is written once.
MATCH (s:CandidateStatement {tenant_id: $tenant_id, statement_key: $statement_key})
SET s.queue_lock = true
REMOVE s.queue_lock
WITH s
MATCH (k:ExtractionCandidate {tenant_id: $tenant_id, statement_key: $statement_key})
WHERE k.status = 'pending'
SET k.status = 'promoted', k.decided_at = $now
RETURN properties(k) AS candidate
ORDER BY k.created_at, k.candidate_id
