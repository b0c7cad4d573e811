// name: queue.candidates_list_all
// params: tenant_id, limit
// mode: read
// The tenant's candidates of every status, oldest first: the first rows of
// extraction_candidate_created in its order, not every candidate sorted.
MATCH (k:ExtractionCandidate)
USING INDEX k:ExtractionCandidate(tenant_id, created_at, candidate_id)
WHERE k.tenant_id = $tenant_id AND k.created_at IS NOT NULL AND k.candidate_id IS NOT NULL
RETURN properties(k) AS candidate
ORDER BY k.tenant_id, k.created_at, k.candidate_id
LIMIT $limit
