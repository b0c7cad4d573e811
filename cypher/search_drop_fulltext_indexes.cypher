// name: search.drop_fulltext_indexes
// params:
// mode: write
// Migration: drop the fulltext indexes so that schema.setup recreates them over the
// tenant-prefixed terms (only run when one is outdated; the vector indexes stay).
DROP INDEX entity_text IF EXISTS;
DROP INDEX fact_text IF EXISTS;
DROP INDEX episode_text IF EXISTS
