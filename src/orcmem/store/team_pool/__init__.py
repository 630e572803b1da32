"""The team pool's PostgreSQL side: its schema and every statement run on the server."""
