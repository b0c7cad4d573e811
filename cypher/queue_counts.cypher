// name: queue.counts
// params:
// mode: read
MATCH (e:Episode)
RETURN e.status AS status, count(*) AS n
