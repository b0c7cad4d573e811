// name: queue.merge_list
// params: tenant_id, status, limit
// mode: read
MATCH (m:MergeCandidate {tenant_id: $tenant_id})
USING INDEX m:MergeCandidate(tenant_id, status)
WHERE m.status IS NOT NULL AND ($status IS NULL OR m.status = $status)
RETURN properties(m) AS candidate
ORDER BY m.created_at, m.candidate_id
LIMIT $limit
