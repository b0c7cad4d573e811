// name: ledger.system_time
// params: tenant_id, wall
// mode: write
// The tenant's system clock, kept in the store: the instant this transaction records at
// is after every instant recorded for the tenant before, whatever the writer's own wall
// clock says. Setting the property holds the node's lock until commit, so the tenant's
// writers take their instants (and commit) one after the other.
MERGE (c:SystemClock {tenant_id: $tenant_id})
SET c.last = CASE
  WHEN c.last IS NULL OR c.last < $wall THEN $wall
  ELSE c.last + duration({microseconds: 1})
END
RETURN toString(c.last) AS at
