// name: schemas.put
// params: tenant_id, version, body_json, updated_at
// mode: write
// (tenant_id, version) is unique: of two concurrent puts of one number, one fails and
// the store retries it with the next number.
CREATE (:Schema {tenant_id: $tenant_id, version: $version, body_json: $body_json, updated_at: $updated_at})
