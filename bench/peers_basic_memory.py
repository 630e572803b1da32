"""basic-memory's search as a benchmark peer; runs in its own Python 3.12 venv (`bench.peers` starts it).

basic-memory 0.24 needs Python >= 3.12 and pins its own dependency set, so it cannot share orcmem's 3.11 venv. This
script imports nothing from orcmem. Protocol: `python peers_basic_memory.py INPUT.json OUTPUT.json`; it indexes
every corpus of INPUT, prints `indexed`, waits for one line on stdin (so the parent can keep its own timings off
the two cores meanwhile), runs and times the queries, writes OUTPUT and prints `done`.

INPUT: {"limit": 10, "corpora": [{"name": str, "docs": [[title, body], ...], "queries": [str, ...],
        "time_budget_s": float | null}]}
OUTPUT: {"version": str, "semantic": bool, "network_attempts": [str], "index_s": {name: float},
         "results": {name: {"ranked": [[doc index, ...], ...], "timings_s": [float], "errors": [str]}}}
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import peers_offline  # the script's own folder is first on sys.path

WARMUP_QUERIES = 3


def _configure(work: Path, names: list[str]) -> None:
    """A private basic-memory home with one project per corpus (nothing under the user's ~/.basic-memory)."""
    os.environ["BASIC_MEMORY_CONFIG_DIR"] = str(work / "config")
    os.environ["FASTEMBED_CACHE_PATH"] = str(work / "fastembed")
    from basic_memory.config import ConfigManager, ProjectEntry

    manager = ConfigManager()
    config = manager.config
    for name in names:
        (work / "projects" / name).mkdir(parents=True, exist_ok=True)
        config.projects[name] = ProjectEntry(path=str(work / "projects" / name))
    config.default_project = names[0]
    manager.save_config(config)


async def _services(names: list[str]) -> tuple[dict, object]:
    """basic-memory's SearchService for each project, built as its `reindex` command builds it."""
    from basic_memory import db
    from basic_memory.config import ConfigManager
    from basic_memory.markdown.entity_parser import EntityParser
    from basic_memory.markdown.markdown_processor import MarkdownProcessor
    from basic_memory.repository import EntityRepository, ProjectRepository
    from basic_memory.repository.search_repository import create_search_repository
    from basic_memory.services.file_service import FileService
    from basic_memory.services.initialization import reconcile_projects_with_config
    from basic_memory.services.search_service import SearchService

    app_config = ConfigManager().config
    await reconcile_projects_with_config(app_config)
    _, session_maker = await db.get_or_create_db(db_path=app_config.database_path, db_type=db.DatabaseType.FILESYSTEM)
    async with db.scoped_session(session_maker) as session:
        projects = {p.name: p for p in await ProjectRepository().get_active_projects(session)}
    services = {}
    for name in names:
        project = projects[name]
        entities = EntityRepository(project_id=project.id)
        search = create_search_repository(session_maker, project_id=project.id, app_config=app_config)
        parser = EntityParser(Path(project.path))
        files = FileService(Path(project.path), MarkdownProcessor(parser, app_config=app_config), app_config=app_config)
        services[name] = (project, entities, SearchService(search, entities, files, session_maker=session_maker))
    return services, session_maker


async def _index(service: tuple, docs: list[list[str]], session_maker: object) -> float:
    """Store every doc as a note entity and build its search rows with basic-memory's own indexer; seconds taken.

    basic-memory's file sync (write Markdown files, then `reindex`) took 70 s for 500 notes here and grows faster
    than linearly, so the notes go in as entity rows and `SearchService.index_entities` (the step of that sync that
    writes the FTS5 rows) indexes them: the same rows, without the file scan and relation passes.
    """
    from basic_memory import db
    from basic_memory.models import Entity

    project, entities, search = service
    started = time.perf_counter()
    now = datetime.now(UTC)
    rows = [
        Entity(
            title=title,
            note_type="note",
            content_type="text/markdown",
            project_id=project.id,
            permalink=f"n{i:06d}",
            file_path=f"n{i:06d}.md",
            created_at=now,
            updated_at=now,
        )
        for i, (title, _) in enumerate(docs)
    ]
    async with db.scoped_session(session_maker) as session:
        await entities.add_all_no_return(session, rows)
        await session.commit()
    async with db.scoped_session(session_maker) as session:
        loaded = await entities.find_by_ids(session, [row.id for row in rows])
    body_by_id = {row.id: body for row, (_, body) in zip(rows, docs, strict=True)}
    await search.index_entities(loaded, content_by_entity_id=body_by_id)
    return time.perf_counter() - started


async def _query(search: object, corpus: dict, limit: int) -> dict:
    """Ranked doc indexes for every query (timed one by one), stopping early past the corpus's time budget."""
    from basic_memory.schemas.search import SearchQuery

    budget = corpus.get("time_budget_s")
    ranked, timings, errors = [], [], []
    for text in corpus["queries"][:WARMUP_QUERIES] if budget else []:
        await search.search(SearchQuery(text=text), limit=limit)  # warm SQLite's page cache, as for orcmem
    spent = 0.0
    for text in corpus["queries"]:
        started = time.perf_counter()
        try:
            rows = await search.search(SearchQuery(text=text), limit=limit)
        except Exception as exc:  # a query basic-memory rejects counts as an empty answer, and is reported
            rows = []
            errors.append(f"{text!r}: {type(exc).__name__}: {exc}")
        elapsed = time.perf_counter() - started
        timings.append(elapsed)
        spent += elapsed
        ranked.append([int(row.permalink[1:]) for row in rows if row.permalink and row.permalink.startswith("n")])
        if budget and spent > budget and len(timings) >= 30:
            break
    return {"ranked": ranked, "timings_s": timings, "errors": errors}


async def _main(source: Path, target: Path) -> None:
    task = json.loads(source.read_text())
    corpora = task["corpora"]
    names = [corpus["name"] for corpus in corpora]
    attempts: list[str] = []
    with peers_offline.no_network(attempts), tempfile.TemporaryDirectory(prefix="bm-peer-") as folder:
        _configure(Path(folder), names)
        from basic_memory import __version__, db

        services, session_maker = await _services(names)
        index_s = {c["name"]: await _index(services[c["name"]], c["docs"], session_maker) for c in corpora}
        print("indexed", flush=True)
        sys.stdin.readline()
        results = {c["name"]: await _query(services[c["name"]][2], c, task["limit"]) for c in corpora}
        semantic = await services[names[0]][2].semantic_effectively_enabled()
        await db.shutdown_db()
    out = {
        "version": __version__,
        "python": sys.version.split()[0],
        "semantic": semantic,
        "network_attempts": attempts,
        "index_s": index_s,
        "results": results,
    }
    target.write_text(json.dumps(out))
    print("done", flush=True)


if __name__ == "__main__":
    peers_offline.set_offline_env()
    from loguru import logger

    logger.remove()  # basic-memory logs every indexed row at DEBUG; keep stderr for real errors
    logger.add(sys.stderr, level="ERROR")
    asyncio.run(_main(Path(sys.argv[1]), Path(sys.argv[2])))
