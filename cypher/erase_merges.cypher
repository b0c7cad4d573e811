// name: erase.merges
// params: tenant_id
// mode: read
// A tenant's merge candidates, as erasure needs them.
MATCH (m:MergeCandidate {tenant_id: $tenant_id})
USING INDEX m:MergeCandidate(tenant_id, candidate_id)
WHERE m.candidate_id IS NOT NULL
RETURN m.candidate_id AS candidate_id, m.episode_id AS episode_id,
       m.entity_id AS entity_id, m.existing_entity_id AS existing_entity_id
