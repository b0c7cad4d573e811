// name: schema.setup
// params: embedding_dim
// mode: write
// Constraints and indexes, created at start; every statement is idempotent (IF NOT EXISTS).
// Run one by one: Neo4j does not mix schema changes in one transaction.

// Ids are unique per tenant.
CREATE CONSTRAINT entity_id IF NOT EXISTS
FOR (e:Entity) REQUIRE (e.tenant_id, e.entity_id) IS UNIQUE;
CREATE CONSTRAINT episode_id IF NOT EXISTS
FOR (e:Episode) REQUIRE (e.tenant_id, e.episode_id) IS UNIQUE;
CREATE CONSTRAINT timeline_key IF NOT EXISTS
FOR (t:Timeline) REQUIRE (t.tenant_id, t.key) IS UNIQUE;
CREATE CONSTRAINT value_key IF NOT EXISTS
FOR (v:Value) REQUIRE (v.tenant_id, v.value_key) IS UNIQUE;
CREATE CONSTRAINT system_clock IF NOT EXISTS
FOR (c:SystemClock) REQUIRE c.tenant_id IS UNIQUE;
// One vector per fact (search.set_fact_vectors), whatever its versions.
CREATE CONSTRAINT fact_vector_id IF NOT EXISTS
FOR (v:FactVector) REQUIRE (v.tenant_id, v.fact_id) IS UNIQUE;
CREATE CONSTRAINT schema_version IF NOT EXISTS
FOR (s:Schema) REQUIRE (s.tenant_id, s.version) IS UNIQUE;
CREATE CONSTRAINT fact_version_id IF NOT EXISTS
FOR ()-[r:FACT]-() REQUIRE r.version_id IS UNIQUE;
// The ledger's invariant, enforced by the database: open_key is carried only by the
// version that is current in system time and open in valid time, so at most one such
// version exists per timeline (the equivalent of SQLite's partial unique index).
CREATE CONSTRAINT fact_one_open IF NOT EXISTS
FOR ()-[r:FACT]-() REQUIRE r.open_key IS UNIQUE;

// Range indexes for the lookups the store makes.
CREATE INDEX fact_predicate IF NOT EXISTS
FOR ()-[r:FACT]-() ON (r.tenant_id, r.predicate);
// GET /facts?predicate= without a subject or object (facts.by_predicate), a page read in
// this index's order from the cursor on.
CREATE INDEX fact_predicate_subject IF NOT EXISTS
FOR ()-[r:FACT]-() ON (r.tenant_id, r.predicate, r.subject, r.fact_id);
CREATE INDEX fact_timeline IF NOT EXISTS
FOR ()-[r:FACT]-() ON (r.tenant_id, r.timeline_key);
CREATE INDEX fact_source IF NOT EXISTS
FOR ()-[r:FACT]-() ON (r.tenant_id, r.source_episode_id);
CREATE INDEX fact_id IF NOT EXISTS
FOR ()-[r:FACT]-() ON (r.fact_id);
// System-time range scans: what was recorded between two instants.
CREATE INDEX fact_recorded IF NOT EXISTS
FOR ()-[r:FACT]-() ON (r.tenant_id, r.recorded_at);
CREATE INDEX assertion_timeline IF NOT EXISTS
FOR (a:Assertion) ON (a.tenant_id, a.timeline_key);
CREATE INDEX assertion_episode IF NOT EXISTS
FOR (a:Assertion) ON (a.tenant_id, a.source_episode_id);
// Retention reads a tenant's episodes in the order they happened.
CREATE INDEX episode_occurred IF NOT EXISTS
FOR (e:Episode) ON (e.tenant_id, e.occurred_at);
CREATE INDEX episode_queue IF NOT EXISTS
FOR (e:Episode) ON (e.status, e.next_attempt_at);

// Fulltext (BM25) over entity names and aliases, fact sentences and episode text, as
// ``terms``: each word prefixed with its tenant's scope token (graph.stores.neo4j.codec.
// index_terms; a fact version open in system time has them under a second prefix in
// ``terms_current`` too), split on whitespace only. Each tenant's words are terms of
// their own: Lucene ranks one tenant's items with that tenant's document frequencies, no
// other tenant's rows can crowd a tenant out or slow its query, and no query needs a
// tenant clause (which kept Lucene from skipping the postings of common words).
CREATE FULLTEXT INDEX entity_text IF NOT EXISTS
FOR (e:Entity) ON EACH [e.terms]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace'}};
CREATE FULLTEXT INDEX fact_text IF NOT EXISTS
FOR ()-[r:FACT]-() ON EACH [r.terms, r.terms_current]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace'}};
CREATE FULLTEXT INDEX episode_text IF NOT EXISTS
FOR (e:Episode) ON EACH [e.terms]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace'}};

// Vector indexes, filtered inside the index (Cypher 25 SEARCH ... WHERE) by tenant and,
// for facts, by ``live`` (the fact has a version open in system time). A FactVector's
// filter is one property: ``scope`` (tenant and model, for a past known_at) and
// ``live_scope`` (the same, set only while the fact is live), because Lucene builds a
// search's filter by walking every row it accepts, and a conjunction of three properties
// walked a 1M-fact tenant's rows 7-10 ms slower than one (bench/README.md, "Neo4j vector
// search: SIMD and the filter"). A fact's vector is
// a FactVector node of its own, not a property of each version: cutting an interval
// retires a version and adds another with the same sentence, and a vector on the versions
// made each cut rewrite index entries (a delete and an add into a new HNSW segment), which
// left a live store's searches 1.3-1.5x slower (bench/neo4j_vector_churn.py). ``live``
// changes only when a fact's last open version goes or its first comes back.
// Without quantization: Neo4j's default (one bit a dimension to walk the graph, then the
// full vectors for 3x the rows asked) found 0.87 of the exact top 50 fact vectors at
// 100k real MiniLM vectors, full vectors 0.97, in the same time
// (bench/neo4j_vector_quantization.py).
CYPHER 25 CREATE VECTOR INDEX entity_embedding IF NOT EXISTS
FOR (e:Entity) ON (e.embedding) WITH [e.tenant_id, e.embedding_model]
OPTIONS {indexConfig: {`vector.dimensions`: $embedding_dim, `vector.similarity_function`: 'cosine',
  `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX episode_embedding IF NOT EXISTS
FOR (e:Episode) ON (e.embedding) WITH [e.tenant_id, e.embedding_model]
OPTIONS {indexConfig: {`vector.dimensions`: $embedding_dim, `vector.similarity_function`: 'cosine',
  `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX fact_vector IF NOT EXISTS
FOR (v:FactVector) ON (v.embedding) WITH [v.scope, v.live_scope]
OPTIONS {indexConfig: {`vector.dimensions`: $embedding_dim, `vector.similarity_function`: 'cosine',
  `vector.quantization.enabled`: false}};

// Use them only once they are online.
CALL db.awaitIndexes(300)
