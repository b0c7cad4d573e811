// name: store.ping
// params:
// mode: read
RETURN 1 AS ok
