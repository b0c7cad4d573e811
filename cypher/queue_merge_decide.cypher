// name: queue.merge_decide
// params: tenant_id, candidate_id, status, now
// mode: write
MATCH (m:MergeCandidate {tenant_id: $tenant_id, candidate_id: $candidate_id})
SET m.queue_lock = true
REMOVE m.queue_lock
WITH m
WHERE m.status = 'open'
SET m.status = $status, m.decided_at = $now
RETURN count(m) AS updated
