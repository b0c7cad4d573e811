// name: queue.purge
// params: tenant_id
// mode: write
// A tenant's pending and merge candidates (tenant.purge removes its episodes).
MATCH (n:ExtractionCandidate|MergeCandidate|CandidateStatement {tenant_id: $tenant_id})
DETACH DELETE n
