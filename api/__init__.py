"""sgam's REST API, its typed client and its command line. Nothing imports this package."""
