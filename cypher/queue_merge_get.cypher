// name: queue.merge_get
// params: tenant_id, candidate_id
// mode: read
MATCH (m:MergeCandidate {tenant_id: $tenant_id, candidate_id: $candidate_id})
RETURN properties(m) AS candidate
