// name: queue.setup
// params:
// mode: write
// Constraints and indexes of the extraction queue and its review lists (idempotent).
// The uniqueness constraints also make the MERGEs below safe under concurrency.
CREATE CONSTRAINT extraction_candidate_id IF NOT EXISTS
FOR (k:ExtractionCandidate) REQUIRE (k.tenant_id, k.candidate_id) IS UNIQUE;
CREATE CONSTRAINT extraction_candidate_once IF NOT EXISTS
FOR (k:ExtractionCandidate) REQUIRE (k.tenant_id, k.episode_id, k.statement_key) IS UNIQUE;
CREATE CONSTRAINT candidate_statement_key IF NOT EXISTS
FOR (s:CandidateStatement) REQUIRE (s.tenant_id, s.statement_key) IS UNIQUE;
CREATE CONSTRAINT merge_candidate_id IF NOT EXISTS
FOR (m:MergeCandidate) REQUIRE (m.tenant_id, m.candidate_id) IS UNIQUE;
CREATE CONSTRAINT merge_candidate_pair IF NOT EXISTS
FOR (m:MergeCandidate) REQUIRE (m.tenant_id, m.entity_id, m.existing_entity_id) IS UNIQUE;
CREATE INDEX episode_lease IF NOT EXISTS
FOR (e:Episode) ON (e.status, e.lease_until);
// The claim's fair round: per tenant, its pending episodes oldest due first.
CREATE INDEX episode_fair IF NOT EXISTS
FOR (e:Episode) ON (e.status, e.tenant_id, e.next_attempt_at);
// The claim asks it whether anything is due at all. Also created by schema.setup; here
// too (a no-op there) because queue.claim names it in a hint, which fails without it.
CREATE INDEX episode_queue IF NOT EXISTS
FOR (e:Episode) ON (e.status, e.next_attempt_at);
CREATE INDEX episode_session IF NOT EXISTS
FOR (e:Episode) ON (e.tenant_id, e.session_id);
CREATE INDEX extraction_candidate_status IF NOT EXISTS
FOR (k:ExtractionCandidate) ON (k.tenant_id, k.status);
CREATE INDEX merge_candidate_status IF NOT EXISTS
FOR (m:MergeCandidate) ON (m.tenant_id, m.status);
// The review lists, oldest first, read in these indexes' order (queue.candidates_list,
// queue.merge_list and their _all forms): a page, not every candidate of the tenant sorted.
CREATE INDEX extraction_candidate_created_status IF NOT EXISTS
FOR (k:ExtractionCandidate) ON (k.tenant_id, k.status, k.created_at, k.candidate_id);
CREATE INDEX extraction_candidate_created IF NOT EXISTS
FOR (k:ExtractionCandidate) ON (k.tenant_id, k.created_at, k.candidate_id);
CREATE INDEX merge_candidate_created_status IF NOT EXISTS
FOR (m:MergeCandidate) ON (m.tenant_id, m.status, m.created_at, m.candidate_id);
CREATE INDEX merge_candidate_created IF NOT EXISTS
FOR (m:MergeCandidate) ON (m.tenant_id, m.created_at, m.candidate_id);
// The entity catalog, newest first (queue.entity_catalog, and by type). The first is
// search.setup's too (a no-op there): the catalog names it in a hint.
CREATE INDEX search_entity_created IF NOT EXISTS
FOR (e:Entity) ON (e.tenant_id, e.created_at);
CREATE INDEX entity_type_created IF NOT EXISTS
FOR (e:Entity) ON (e.tenant_id, e.entity_type, e.created_at);
CALL db.awaitIndexes(300)
