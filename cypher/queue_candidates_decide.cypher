// name: queue.candidates_decide
// params: tenant_id, candidate_id, status, from_status, now, note
// mode: write
MATCH (k:ExtractionCandidate {tenant_id: $tenant_id, candidate_id: $candidate_id})
SET k.queue_lock = true
REMOVE k.queue_lock
WITH k
WHERE k.status = $from_status
SET k.status = $status, k.decided_at = $now, k.note = $note
RETURN count(k) AS updated
