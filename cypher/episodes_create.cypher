// name: episodes.create
// params: props
// mode: write
// CREATE, not MERGE: a concurrent post of the same id fails on the (tenant_id, episode_id)
// constraint, and the store then compares contents like any other repeated post.
CREATE (e:Episode)
SET e = $props
// The tenant's scope token, which the fulltext query requires (see schema.setup).
SET e.scope = 't' + replace(replace(e.tenant_id, '_', '_u'), '-', '_h')
