// name: queue.abandon
// params: tenant_id, now, max_attempts
// mode: write
// Episodes whose lease expired after the last allowed attempt: failed, visibly, so an
// episode that kills its workers cannot loop forever.
MATCH (e:Episode)
WHERE e.status = 'processing' AND e.lease_until <= $now
  AND ($tenant_id IS NULL OR e.tenant_id = $tenant_id)
SET e.queue_lock = true
REMOVE e.queue_lock
WITH e
WHERE e.status = 'processing' AND e.lease_until <= $now AND e.attempts >= $max_attempts
SET e.status = 'failed',
    e.lease_owner = null,
    e.lease_until = null,
    e.next_attempt_at = null,
    e.last_error = 'abandoned: the worker lease expired on attempt ' + toString(e.attempts)
      + ' of ' + toString($max_attempts) + ' (the worker crashed or stalled)'
RETURN count(e) AS abandoned
