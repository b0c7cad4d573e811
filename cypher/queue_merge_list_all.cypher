// name: queue.merge_list_all
// params: tenant_id, limit
// mode: read
// The tenant's merge candidates of every status, oldest first, in the order of
// merge_candidate_created.
MATCH (m:MergeCandidate)
USING INDEX m:MergeCandidate(tenant_id, created_at, candidate_id)
WHERE m.tenant_id = $tenant_id AND m.created_at IS NOT NULL AND m.candidate_id IS NOT NULL
RETURN properties(m) AS candidate
ORDER BY m.tenant_id, m.created_at, m.candidate_id
LIMIT $limit
