// name: search.drop_version_vectors_index
// params:
// mode: write
// Migration: the vector index over fact versions, from before FactVector nodes.
DROP INDEX fact_embedding IF EXISTS
