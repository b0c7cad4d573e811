// name: erase.merges
// params: tenant_id
// mode: read
// A tenant's merge candidates, as erasure needs them.
MATCH (m:MergeCandidate {tenant_id: $tenant_id})
RETURN m.candidate_id AS candidate_id, m.episode_id AS episode_id,
       m.entity_id AS entity_id, m.existing_entity_id AS existing_entity_id
