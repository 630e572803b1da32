"""Infrastructure: the SQLite file, its migrations and the repositories. All SQL lives in this package.

Names load on first use (see orcmem.lazy): the prompt hook imports one small module of this package.
"""

from __future__ import annotations

from orcmem.lazy import lazy_getattr

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs the hooks milliseconds

if TYPE_CHECKING:
    from orcmem.store.connection import Database
    from orcmem.store.facade import Store
    from orcmem.store.jobs import Job
    from orcmem.store.memories import WordHit
    from orcmem.store.runs import Run
    from orcmem.store.summaries import Summary
    from orcmem.store.tasks import Task
    from orcmem.store.vectors import PendingMemory, VectorHit

__all__ = [
    "Database",
    "Job",
    "PendingMemory",
    "Run",
    "Store",
    "Summary",
    "Task",
    "VectorHit",
    "WordHit",
]

__getattr__ = lazy_getattr(
    __name__,
    {
        "Database": "orcmem.store.connection",
        "Job": "orcmem.store.jobs",
        "Run": "orcmem.store.runs",
        "Summary": "orcmem.store.summaries",
        "Task": "orcmem.store.tasks",
        "PendingMemory": "orcmem.store.vectors",
        "VectorHit": "orcmem.store.vectors",
        "WordHit": "orcmem.store.memories",
        "Store": "orcmem.store.facade",
    },
)
