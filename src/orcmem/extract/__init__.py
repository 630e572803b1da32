"""Extraction: a finished run's ledger events become a digest, a prompt, one model call, and parsed memories.

Domain layer: it imports only orcmem.models, orcmem.models.errors, orcmem.text.redact and the standard library (plus
`anthropic`, lazily, inside the API generator). Importing it reads no environment and starts nothing.
"""
