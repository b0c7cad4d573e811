// name: search.drop_fact_vector_index
// params:
// mode: write
// Migration: drop fact_vector alone when only its filter properties changed, so that
// schema.setup builds it again from the vectors the FactVector nodes hold (the other
// indexes stay: rebuilding a large store's indexes takes long).
DROP INDEX fact_vector IF EXISTS
