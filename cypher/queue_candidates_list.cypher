// name: queue.candidates_list
// params: tenant_id, status, episode_id, limit
// mode: read
MATCH (k:ExtractionCandidate {tenant_id: $tenant_id})
USING INDEX k:ExtractionCandidate(tenant_id, status)
WHERE k.status IS NOT NULL
  AND ($status IS NULL OR k.status = $status)
  AND ($episode_id IS NULL OR k.episode_id = $episode_id)
RETURN properties(k) AS candidate
ORDER BY k.created_at, k.candidate_id
LIMIT $limit
