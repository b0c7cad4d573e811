// name: search.drop_indexes
// params:
// mode: write
// Migration: drop the fulltext and vector indexes so that schema.setup recreates them
// with the scope fields and filter properties (only run when one is outdated).
DROP INDEX entity_text IF EXISTS;
DROP INDEX fact_text IF EXISTS;
DROP INDEX episode_text IF EXISTS;
DROP INDEX entity_embedding IF EXISTS;
DROP INDEX episode_embedding IF EXISTS;
DROP INDEX fact_embedding IF EXISTS;
DROP INDEX fact_vector IF EXISTS
