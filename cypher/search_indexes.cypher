// name: search.indexes
// params:
// mode: read
// The fulltext and vector indexes as they are, to tell an outdated definition (without
// the scope fields or the vector filter properties) from the current one, and a store
// whose versions still carry their fact's vector (fact_embedding).
SHOW INDEXES YIELD name, type, properties, options
WHERE name IN ['entity_text', 'fact_text', 'episode_text',
               'entity_embedding', 'episode_embedding', 'fact_embedding',
               'fact_vector']
RETURN name, type, properties, options
