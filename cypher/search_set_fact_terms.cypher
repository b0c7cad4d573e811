// name: search.set_fact_terms
// params: rows
// mode: write
// Migration: the fulltext terms and current flag of the versions search.backfill_facts
// returned (each row names its version id, unique in the store); the scope properties of
// the previous layout go.
UNWIND $rows AS row
MATCH ()-[r:FACT {version_id: row.id}]->()
SET r.current = row.open, r.terms = row.terms, r.terms_current = row.terms_current
REMOVE r.scope, r.scope_current
