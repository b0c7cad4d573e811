// name: queue.entity_add_alias
// params: tenant_id, entity_id, alias, alias_terms
// mode: write
// A new alias also becomes fulltext terms of the entity ($alias_terms: the alias's words
// under the tenant's prefix, graph.stores.neo4j.codec.index_terms).
MATCH (e:Entity {tenant_id: $tenant_id, entity_id: $entity_id})
WITH e, $alias IN coalesce(e.aliases, []) AS known
SET e.aliases = CASE WHEN known THEN e.aliases ELSE coalesce(e.aliases, []) + $alias END,
    e.terms = CASE WHEN known THEN e.terms
      ELSE trim(coalesce(e.terms, '') + ' ' + $alias_terms) END
RETURN count(e) AS updated
