// name: ledger.retire_versions
// params: tenant_id, version_ids, at
// mode: write
// Close versions in system time. Dropping open_key frees the timeline's one-open-row slot
// for the version that replaces it in the same transaction; current and scope_current go
// too, so the search indexes stop offering it for the present.
UNWIND $version_ids AS vid
MATCH ()-[r:FACT {version_id: vid}]->()
USING INDEX r:FACT(version_id)
WHERE r.tenant_id = $tenant_id AND r.retired_at IS NULL
SET r.retired_at = $at, r.current = false
REMOVE r.open_key, r.scope_current
