"""The team pool: a PostgreSQL database with pgvector that profiles share projects' memories through (docs/team.md)."""
