// name: search.session_neighbors
// params: tenant_id, episode_ids, known_at, radius
// mode: read
// Up to $radius episodes before and after each one in its session, in conversation order
// (occurred_at, then recorded_at); offset -1 is the turn just before.
UNWIND $episode_ids AS id
MATCH (me:Episode {tenant_id: $tenant_id, episode_id: id})
USING INDEX me:Episode(tenant_id, episode_id)
WHERE me.session_id IS NOT NULL
CALL (me) {
  MATCH (o:Episode {tenant_id: $tenant_id, session_id: me.session_id})
  USING INDEX SEEK o:Episode(tenant_id, session_id)
  WHERE o.recorded_at <= $known_at
    AND (o.occurred_at < me.occurred_at
         OR (o.occurred_at = me.occurred_at AND o.recorded_at < me.recorded_at))
  WITH o ORDER BY o.occurred_at DESC, o.recorded_at DESC LIMIT $radius
  WITH collect(o.episode_id) AS ids
  UNWIND range(0, size(ids) - 1) AS i
  RETURN ids[i] AS other, -(i + 1) AS offset
  UNION
  MATCH (o:Episode {tenant_id: $tenant_id, session_id: me.session_id})
  USING INDEX SEEK o:Episode(tenant_id, session_id)
  WHERE o.recorded_at <= $known_at
    AND (o.occurred_at > me.occurred_at
         OR (o.occurred_at = me.occurred_at AND o.recorded_at > me.recorded_at))
  WITH o ORDER BY o.occurred_at, o.recorded_at LIMIT $radius
  WITH collect(o.episode_id) AS ids
  UNWIND range(0, size(ids) - 1) AS i
  RETURN ids[i] AS other, i + 1 AS offset
}
RETURN me.episode_id AS episode_id, other, offset
