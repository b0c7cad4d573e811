// name: queue.candidates_list_episode
// params: tenant_id, episode_id, status, limit
// mode: read
// One episode's candidates (one model answer's at most), oldest first: sought by
// episode (extraction_candidate_once) and sorted.
MATCH (k:ExtractionCandidate)
USING INDEX k:ExtractionCandidate(tenant_id, episode_id, statement_key)
WHERE k.tenant_id = $tenant_id AND k.episode_id = $episode_id AND k.statement_key IS NOT NULL
  AND ($status IS NULL OR k.status = $status)
RETURN properties(k) AS candidate
ORDER BY k.created_at, k.candidate_id
LIMIT $limit
