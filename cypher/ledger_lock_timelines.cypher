// name: ledger.lock_timelines
// params: tenant_id, keys, since
// mode: write
// Lock the timelines, then read their versions not retired in system time, in one round
// trip (the ledger reads them next; the store keeps this answer for that call). A write
// takes the node's exclusive lock until the transaction ends, so two writers on one
// timeline run one after the other: creating the node holds it, and an existing one gets
// its write counter raised. $keys arrive sorted: every writer locks in the same order and
// they cannot deadlock on timelines. The aggregation ends the locking before the reads.
UNWIND $keys AS key
MERGE (t:Timeline {tenant_id: $tenant_id, key: key})
  ON MATCH SET t.writes = coalesce(t.writes, 0) + 1
WITH collect(key) AS locked
UNWIND locked AS key
MATCH ()-[r:FACT {tenant_id: $tenant_id, timeline_key: key}]->()
USING INDEX r:FACT(tenant_id, timeline_key)
WHERE r.retired_at IS NULL
  AND ($since IS NULL OR r.valid_to IS NULL OR r.valid_to > $since)
// include: fact_projection
ORDER BY r.valid_from
