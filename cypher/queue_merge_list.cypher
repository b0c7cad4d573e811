// name: queue.merge_list
// params: tenant_id, status, limit
// mode: read
MATCH (m:MergeCandidate {tenant_id: $tenant_id})
WHERE $status IS NULL OR m.status = $status
RETURN properties(m) AS candidate
ORDER BY m.created_at, m.candidate_id
LIMIT $limit
