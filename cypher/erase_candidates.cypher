// name: erase.candidates
// params: tenant_id
// mode: read
// A tenant's held extraction candidates, as erasure needs them (it reads their deltas).
MATCH (k:ExtractionCandidate {tenant_id: $tenant_id})
USING INDEX k:ExtractionCandidate(tenant_id, candidate_id)
WHERE k.candidate_id IS NOT NULL
RETURN k.candidate_id AS candidate_id, k.episode_id AS episode_id, k.delta_json AS delta_json
