// name: ledger.append_assertions
// params: tenant_id, rows
// mode: write
// The ledger entries of one write, one node each. Properties are named (a map SET would
// make the planner buffer all rows); times arrive as text, datetime() here costs less
// than the Python driver packing DATETIME values.
UNWIND $rows AS row
CREATE (a:Assertion)
SET a.tenant_id = $tenant_id,
    a.timeline_key = row.timeline_key,
    a.seq = row.seq,
    a.kind = row.kind,
    a.fact_id = row.fact_id,
    a.recorded_at = datetime(row.recorded_at),
    a.valid_from = datetime(row.valid_from),
    a.valid_to = datetime(row.valid_to),
    a.source_episode_id = row.source_episode_id,
    a.payload = row.payload
