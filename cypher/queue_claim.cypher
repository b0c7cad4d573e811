// name: queue.claim
// params: tenant_id, now, owner, lease_until, after, with_model
// mode: write
// The next due episode: a crashed worker's (expired lease) first; then, fair across
// tenants, the oldest due pending episode of the first tenant after $after (the tenant
// this queue served last) in tenant order, wrapping round to the first. Only episodes
// this worker can do: without a model ($with_model false), those that need none (null:
// not known, anyone may try). Locked, then checked again: of two workers that picked
// the same episode, the second finds it taken (claimed = false).
// One tenant's queue ($tenant_id set) is asked with $after null; across all tenants
// $tenant_id is null. Every branch below is one seek of a range index read in its order
// and stopped at the first match (LIMIT 1), never a sort of the backlog: the pending
// ones read episode_fair (status, tenant_id, next_attempt_at), where a tenant's oldest
// episode comes first. ORDER BY names the index's properties from the first (e.status,
// a constant here): only then does the planner take the index's order instead of sorting.
CALL () {
  MATCH (e:Episode)
  USING INDEX e:Episode(status, lease_until)
  WHERE e.status = 'processing' AND e.lease_until <= $now
    AND ($tenant_id IS NULL OR e.tenant_id = $tenant_id)
    AND ($with_model OR NOT coalesce(e.needs_model, false))
  RETURN e, 0 AS rank
  ORDER BY e.status, e.lease_until
  LIMIT 1
  UNION
  // One tenant's oldest due episode (no match when $tenant_id is null).
  MATCH (e:Episode)
  USING INDEX e:Episode(status, tenant_id, next_attempt_at)
  WHERE e.status = 'pending' AND e.tenant_id = $tenant_id AND e.next_attempt_at <= $now
    AND ($with_model OR NOT coalesce(e.needs_model, false))
  RETURN e, 1 AS rank
  ORDER BY e.status, e.tenant_id, e.next_attempt_at
  LIMIT 1
  UNION
  // The round, asked only when some episode is due at all (episode_queue: one seek), as
  // the fair index holds the not-yet-due too: while every episode waits for a retry (a
  // model outage) an idle poll then costs a seek, not a walk over the backlog.
  MATCH (x:Episode)
  USING INDEX x:Episode(status, next_attempt_at)
  WHERE x.status = 'pending' AND x.next_attempt_at <= $now
  WITH x
  LIMIT 1
  CALL () {
    // The first tenant after $after with a due episode, its oldest one ...
    MATCH (e:Episode)
    USING INDEX e:Episode(status, tenant_id, next_attempt_at)
    WHERE e.status = 'pending' AND e.tenant_id > $after AND e.next_attempt_at <= $now
      AND ($with_model OR NOT coalesce(e.needs_model, false))
    RETURN e, 1 AS rank
    ORDER BY e.status, e.tenant_id, e.next_attempt_at
    LIMIT 1
    UNION
    // ... else, wrapping round, the first tenant up to $after with one.
    MATCH (e:Episode)
    USING INDEX e:Episode(status, tenant_id, next_attempt_at)
    WHERE e.status = 'pending' AND e.tenant_id <= $after AND e.next_attempt_at <= $now
      AND ($with_model OR NOT coalesce(e.needs_model, false))
    RETURN e, 2 AS rank
    ORDER BY e.status, e.tenant_id, e.next_attempt_at
    LIMIT 1
  }
  RETURN e, rank
}
WITH e
ORDER BY rank
LIMIT 1
SET e.queue_lock = true
REMOVE e.queue_lock
WITH e,
     (e.status = 'pending' AND e.next_attempt_at <= $now)
     OR (e.status = 'processing' AND e.lease_until <= $now) AS claimed
CALL (e, claimed) {
  WITH e, claimed WHERE claimed
  SET e.status = 'processing',
      e.lease_owner = $owner,
      e.lease_until = $lease_until,
      e.attempts = e.attempts + 1
}
// No row: nothing is due. claimed = false: another worker took it first; look again.
RETURN e {.*, embedding: null} AS episode, claimed
