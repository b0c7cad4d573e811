// name: queue.candidates_get
// params: tenant_id, candidate_id
// mode: read
MATCH (k:ExtractionCandidate {tenant_id: $tenant_id, candidate_id: $candidate_id})
RETURN properties(k) AS candidate
