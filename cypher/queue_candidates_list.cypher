// name: queue.candidates_list
// params: tenant_id, status, limit
// mode: read
// The tenant's candidates of one status, oldest first: the first rows of
// extraction_candidate_created_status in its order (the equality properties lead the
// ORDER BY so that the planner reads the index's order), not every candidate sorted.
MATCH (k:ExtractionCandidate)
USING INDEX k:ExtractionCandidate(tenant_id, status, created_at, candidate_id)
WHERE k.tenant_id = $tenant_id AND k.status = $status
  AND k.created_at IS NOT NULL AND k.candidate_id IS NOT NULL
RETURN properties(k) AS candidate
ORDER BY k.tenant_id, k.status, k.created_at, k.candidate_id
LIMIT $limit
