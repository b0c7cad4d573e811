// name: queue.merge_list
// params: tenant_id, status, limit
// mode: read
// The tenant's merge candidates of one status, oldest first, in the order of
// merge_candidate_created_status (as queue.candidates_list).
MATCH (m:MergeCandidate)
USING INDEX m:MergeCandidate(tenant_id, status, created_at, candidate_id)
WHERE m.tenant_id = $tenant_id AND m.status = $status
  AND m.created_at IS NOT NULL AND m.candidate_id IS NOT NULL
RETURN properties(m) AS candidate
ORDER BY m.tenant_id, m.status, m.created_at, m.candidate_id
LIMIT $limit
