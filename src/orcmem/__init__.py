"""orcmem: project memory for coding agents, in one local SQLite file.

Names are imported from the module that defines them (`orcmem.service.memory_service.MemoryService`); this file stays
empty so that `import orcmem.hooks.handlers` loads nothing else for the agent's hooks.
"""

__version__ = "0.1.0"
