// name: erase.timeline_locks
// params: tenant_id, keys
// mode: write
// Delete the lock nodes of these timelines (an entity's own, whose keys name it): a forget
// batch clears them while it still knows the keys (graph.erasure.delete_episodes).
UNWIND $keys AS key
MATCH (t:Timeline {tenant_id: $tenant_id, key: key})
DETACH DELETE t
