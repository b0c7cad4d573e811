// name: search.drop_vector_indexes
// params:
// mode: write
// Migration: drop the vector indexes built with quantization, so that schema.setup builds
// them again without it from the vectors the nodes hold (fact_embedding, the previous
// layout's, is left to the fact vector move, which needs it until it is done).
DROP INDEX entity_embedding IF EXISTS;
DROP INDEX episode_embedding IF EXISTS;
DROP INDEX fact_vector IF EXISTS
