// name: episodes.create
// params: props
// mode: write
// CREATE, not MERGE: a concurrent post of the same id fails on the (tenant_id, episode_id)
// constraint, and the store then compares contents like any other repeated post. The
// props carry the fulltext terms (graph.stores.neo4j.codec.episode_props).
CREATE (e:Episode)
SET e = $props
