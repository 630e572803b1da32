"""The rules a memory, a permission and a citation's freshness must satisfy; no storage."""
