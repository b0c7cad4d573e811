// name: queue.claim
// params: tenant_id, now, owner, lease_until
// mode: write
// The next due episode: a crashed worker's (expired lease) first, then the oldest due
// pending one. Locked, then checked again: of two workers that picked the same episode,
// the second finds it taken (claimed = false).
CALL () {
  MATCH (e:Episode)
  WHERE e.status = 'processing' AND e.lease_until <= $now
    AND ($tenant_id IS NULL OR e.tenant_id = $tenant_id)
  RETURN e, 0 AS rank, e.lease_until AS due
  ORDER BY due
  LIMIT 1
  UNION
  MATCH (e:Episode)
  WHERE e.status = 'pending' AND e.next_attempt_at <= $now
    AND ($tenant_id IS NULL OR e.tenant_id = $tenant_id)
  RETURN e, 1 AS rank, e.next_attempt_at AS due
  ORDER BY due
  LIMIT 1
}
WITH e
ORDER BY rank, due
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
