"""The team pool on a real PostgreSQL 16 with pgvector (pgserver): push and pull of 10,000 memories, how soon a
memory written on one profile is found on another with background sync, search in the database at 100,000 and
1,000,000 memories (and its recall@10 against exact search), and the prompt hook with a connected profile.

`python -m bench.team [--sizes 100000,1000000]`; `python -m bench` reports it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import Latency, embedded_service, latency, profile_with_memories, queries, synthetic_memories
from orcmem.host.workspace import Location
from orcmem.models.constants import SEARCH_CANDIDATES
from orcmem.models.types import Project
from orcmem.retrieve.query import query_terms
from orcmem.service.memory_service import MemoryService
from orcmem.service.team import TeamLink
from orcmem.store.team_pool.server import HNSW_EF_SEARCH, TeamServer, connect
from orcmem.team.background import TeamSyncer
from orcmem.team.sync import open_team, sync, sync_now

SYNC_COUNT = 10_000
SIZES = (100_000, 1_000_000)
PROPAGATION_SAMPLES = 20
SEARCH_QUERIES = 100
EXACT_QUERIES = 30
HOOK_SAMPLES = 30
NOISE_VECTORS = 1000
NOISE_SCALE = 0.02  # per dimension: a copy stays about 0.93 similar to the memory it was made from
TEAM, KEY = "bench", "bench/app"
TARGET_SYNC_S, TARGET_PROPAGATION_S, TARGET_SEARCH_MS, TARGET_RECALL = 10.0, 2.0, 50.0, 0.95


@dataclass
class SearchFigures:
    """Search in the database at one size."""

    size: int
    insert_s: float  # bulk load of the rows (words indexed as they arrive)
    index_s: float  # building the HNSW index
    server: Latency  # words + meaning queries, as `orcmem search --team` sends them
    recall10: float  # the meaning query's top 10 against exact search


@dataclass
class TeamResult:
    """Every figure of the section."""

    push_s: float
    index_s: float  # moving the pushed vectors into the HNSW index afterwards
    pull_s: float
    propagation: Latency
    hook_connected: Latency
    hook_alone: Latency
    searches: list[SearchFigures]


def _start_postgres(folder: Path) -> Any:
    import pgserver

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pgserver.get_server(str(folder), cleanup_mode="stop")


def _database(server: Any, name: str) -> str:
    with connect(str(server.get_uri())) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    return str(server.get_uri()).replace("/postgres?", f"/{name}?")


def _join(svc: MemoryService, url: str, person: str, folder: Path) -> Project:
    server = TeamServer(connect(url), TEAM)
    server.prepare(create_team=True)
    server.close()
    svc.settings.set_enabled(True)
    svc.settings.set_person(person)
    svc.team.set_link(TeamLink(url, TEAM))
    folder.mkdir(parents=True, exist_ok=True)
    project = svc.project(Location(str(folder), str(folder), folder.name))
    assert project is not None
    svc.team.share(project, KEY)
    return project


def run(work: Path | None = None, sizes: tuple[int, ...] = SIZES) -> TeamResult:
    """Measure everything on a fresh PostgreSQL in `work`."""
    work = work or Path(tempfile.mkdtemp(prefix="orcmem-bench-team-"))
    pg = _start_postgres(work / "pg")
    try:
        url = _database(pg, "team")
        print("team: 10,000 memories embedded...", flush=True)
        profile_with_memories(work / "a", work / "project-a", SYNC_COUNT)
        alice = embedded_service(work / "a")
        _join(alice, url, "alice@bench", work / "project-a")
        server = open_team(alice)
        started = time.perf_counter()
        sync(alice, server)  # the push, as `orcmem team sync` does it before it moves vectors into the index
        push_s = time.perf_counter() - started
        started = time.perf_counter()
        while server.move_fresh_vectors():
            pass
        index_s = time.perf_counter() - started
        server.close()
        bob = MemoryService.open(work / "b")
        bob.settings.set_embedding_model(alice.settings.embedding_model())
        _join(bob, url, "bob@bench", work / "project-b")
        started = time.perf_counter()
        sync_now(bob)
        pull_s = time.perf_counter() - started
        print(f"team: push {push_s:.1f} s (index {index_s:.1f} s), pull {pull_s:.1f} s", flush=True)
        assert bob.count(bob.store.projects.get(bob.team.shared()[0].project_id)) == SYNC_COUNT
        propagation = _propagation(alice, work / "b")
        print(f"team: propagation p50 {propagation.p50:.0f} ms", flush=True)
        hook_connected, hook_alone = _hooks(work)
        print(f"team: hook {hook_connected.p50:.1f} ms connected, {hook_alone.p50:.1f} ms alone", flush=True)
        memories = _all(alice)
        vectors = [alice.store.vectors.vector_of(m.id, alice.settings.embedding_model()) for m in memories]
        texts = [(m.title, m.body) for m in memories]
        asked = queries(SEARCH_QUERIES)
        asked_vectors = [alice.embedder.embed_query(text, timeout=30) for text in asked]  # type: ignore[union-attr]
        alice.close()
        bob.close()
        searches = _searches(_database(pg, "search"), texts, vectors, asked, asked_vectors, sizes)
    finally:
        pg.cleanup()
        shutil.rmtree(work, ignore_errors=True)
    return TeamResult(push_s, index_s, pull_s, propagation, hook_connected, hook_alone, searches)


def _all(svc: MemoryService) -> list[Any]:
    from orcmem.models.types import MemoryFilter

    project = svc.team.shared()[0].project_id
    return svc.store.memories.list(project, MemoryFilter(statuses=("active",), limit=SYNC_COUNT))


def _propagation(alice: MemoryService, bob_home: Path) -> Latency:
    """Write on alice's profile; time until bob's profile holds it, both syncing in the background."""
    print("team: a write on one profile, found on another...", flush=True)
    syncers = [TeamSyncer(alice.home), TeamSyncer(bob_home)]
    for syncer in syncers:
        syncer.start()
    reader = MemoryService.open(bob_home)
    project = alice.store.projects.get(alice.team.shared()[0].project_id)
    assert project is not None
    times = []
    try:
        deadline = time.monotonic() + 60
        while not all(s.syncs for s in syncers) and time.monotonic() < deadline:
            time.sleep(0.05)
        for n in range(PROPAGATION_SAMPLES):
            memory = synthetic_memories(SYNC_COUNT + n + 1)[-1]
            started = time.perf_counter()
            written = alice.record(project, memory, embed=False).memory
            while not reader.memories_by_id([written.id]):
                if time.perf_counter() - started > 30:
                    raise RuntimeError("a write did not reach the other profile in 30 s")
                time.sleep(0.01)
            times.append(time.perf_counter() - started)
            time.sleep(0.2)
    finally:
        reader.close()
        for syncer in syncers:
            syncer.close()
    return latency(times)


def _hooks(work: Path) -> tuple[Latency, Latency]:
    """`orcmem hook prompt` on the connected profile and on the same memories unconnected, interleaved."""
    print("team: the prompt hook, connected and not...", flush=True)
    profile_with_memories(work / "alone", work / "project-alone", SYNC_COUNT)
    orcmem = shutil.which("orcmem", path=str(Path(sys.executable).parent)) or "orcmem"
    prompts = queries(HOOK_SAMPLES)
    timed: dict[str, list[float]] = {"a": [], "alone": []}
    for text in prompts:
        for name in ("a", "alone"):
            payload = {"session_id": "bench", "cwd": str(work / f"project-{name}"), "prompt": text}
            env = {**os.environ, "ORCMEM_HOME": str(work / name)}
            started = time.perf_counter()
            subprocess.run(
                [orcmem, "hook", "prompt"],
                input=json.dumps(payload),
                text=True,
                env=env,
                check=True,
                capture_output=True,
            )
            timed[name].append(time.perf_counter() - started)
    return latency(timed["a"]), latency(timed["alone"])


def _searches(
    url: str,
    texts: list[tuple[str, str]],
    vectors: list[list[float] | None],
    asked: list[str],
    asked_vectors: list[list[float] | None],
    sizes: tuple[int, ...],
) -> list[SearchFigures]:
    """Grow one team's project to each size (copies of the 10,000 memories, each vector moved a little), index it
    and time the search."""
    server = TeamServer(connect(url), TEAM)
    server.prepare(create_team=True)
    conn = server.conn
    base = [(n, t, b, v) for n, ((t, b), v) in enumerate(zip(texts, vectors, strict=True)) if v is not None]
    conn.execute("CREATE TEMP TABLE base (n int PRIMARY KEY, title text, body text, v vector(384))")
    with conn.cursor().copy("COPY base (n, title, body, v) FROM STDIN") as copy:
        for n, title, body, vector in base:
            copy.write_row((n, title, body, "[" + ",".join(f"{x:.7f}" for x in vector) + "]"))
    conn.execute(
        # The WHERE ties the inner query to each k, so every row draws its own numbers.
        "CREATE TEMP TABLE noise AS SELECT k, (SELECT array_agg((random() - 0.5) * %s * 3.4641) "
        "FROM generate_series(1, 384) d WHERE k >= 0)::vector(384) AS v FROM generate_series(0, %s - 1) k",
        (NOISE_SCALE, NOISE_VECTORS),
    )
    figures = []
    have = 0
    for size in sizes:
        print(f"team: search at {size:,} memories...", flush=True)
        conn.execute("DROP INDEX IF EXISTS orcmem.memories_meaning")
        started = time.perf_counter()
        conn.execute(
            "INSERT INTO orcmem.memories (team_id, project_key, id, type, title, body, confidence, status, source, "
            "evidence_count, created_at, updated_at, last_confirmed_at, author, model_id, embedding, seq) "
            "SELECT %s, %s, 'mem_' || lpad(to_hex(i), 32, '0'), 'lesson', b.title, b.body || ' copy' || i, 0.6, "
            "'active', 'agent', 1, 0, i, 0, 'bench', 'bench-model', b.v + z.v, nextval('orcmem.change_seq') "
            "FROM generate_series(%s, %s - 1) i JOIN base b ON b.n = i %% %s "
            "JOIN noise z ON z.k = (i / %s) %% %s",
            (TEAM, KEY, have, size, len(base), len(base), NOISE_VECTORS),
        )
        insert_s = time.perf_counter() - started
        have = size
        started = time.perf_counter()
        conn.execute("SET maintenance_work_mem = '4GB'")
        conn.execute("SET max_parallel_maintenance_workers = 2")
        conn.execute("CREATE INDEX memories_meaning ON orcmem.memories USING hnsw (embedding vector_cosine_ops)")
        conn.execute("ANALYZE orcmem.memories")
        index_s = time.perf_counter() - started
        timings, found = [], 0
        for text, vector in zip(asked, asked_vectors, strict=True):  # untimed: a pool in use has its index in memory
            assert vector is not None
            server.search_words(KEY, "p", query_terms(text), SEARCH_CANDIDATES)
            server.search_meaning(KEY, "p", vector, "bench-model", SEARCH_CANDIDATES)
        for n, (text, vector) in enumerate(zip(asked, asked_vectors, strict=True)):
            assert vector is not None
            started = time.perf_counter()
            server.search_words(KEY, "p", query_terms(text), SEARCH_CANDIDATES)
            near = server.search_meaning(KEY, "p", vector, "bench-model", SEARCH_CANDIDATES)
            timings.append(time.perf_counter() - started)
            if n < EXACT_QUERIES:
                exact = _exact(conn, vector)
                found += len({m.id for m, _ in near[:10]} & exact)
        figures.append(SearchFigures(size, insert_s, index_s, latency(timings), found / (10 * EXACT_QUERIES)))
        print(f"team: {figures[-1]}", flush=True)
    server.close()
    return figures


def _exact(conn: Any, vector: list[float]) -> set[str]:
    """The true 10 nearest, by a full scan."""
    text = "[" + ",".join(repr(x) for x in vector) + "]"
    with conn.transaction():
        conn.execute("SET LOCAL enable_indexscan = off")
        rows = conn.execute(
            "SELECT id FROM orcmem.memories WHERE team_id = %s AND project_key = %s "
            "ORDER BY embedding <=> %s::vector LIMIT 10",
            (TEAM, KEY, text),
        ).fetchall()
    return {row[0] for row in rows}


def render(r: TeamResult) -> list[str]:
    """The report section."""

    def met(ok: bool) -> str:
        return "met" if ok else "**missed**"

    ratio = r.hook_connected.p50 / r.hook_alone.p50
    lines = [
        "## Team pool",
        "",
        "A real PostgreSQL 16 with pgvector 0.6 (pgserver, on this machine, over its Unix socket), one team.",
        "`python -m bench.team`. Targets from the team pool's issue.",
        "",
        "| what | figure | target |",
        "|---|---:|---|",
        f"| push of {SYNC_COUNT:,} memories with their vectors (`orcmem team sync` on the writing profile) | "
        f"{r.push_s:.1f} s | at most {TARGET_SYNC_S:.0f} s: {met(r.push_s <= TARGET_SYNC_S)} |",
        f"| then, after the push returned: their vectors moved into the HNSW index (by the syncing profile) | "
        f"{r.index_s:.1f} s | (meaning search reads them before and after) |",
        f"| pull of the same {SYNC_COUNT:,} into a new profile (vectors stored, nothing to embed) | {r.pull_s:.1f} s | "
        f"at most {TARGET_SYNC_S:.0f} s: {met(r.pull_s <= TARGET_SYNC_S)} |",
        f"| a memory written on one profile, held by another (both syncing in the background), p50 / p95 | "
        f"{r.propagation.p50 / 1000:.2f} / {r.propagation.p95 / 1000:.2f} s | "
        f"p50 at most {TARGET_PROPAGATION_S:.0f} s: {met(r.propagation.p50 / 1000 <= TARGET_PROPAGATION_S)} |",
        f"| `orcmem hook prompt`, connected profile ÷ the same memories unconnected, p50 | {ratio:.2f} "
        f"({r.hook_connected.p50:.1f} / {r.hook_alone.p50:.1f} ms) | no network on the hot path: 1.0 |",
        "",
        "Search in the database (`orcmem search --team`: the words query and the meaning query, the query already",
        "embedded), on copies of the 10,000 synthetic memories whose vectors were each moved a little (about 0.93",
        f"similar to their original), {SEARCH_QUERIES} queries, each asked once untimed first (a pool in use has its",
        f"index in memory); recall@10 of the meaning query (HNSW, ef_search {HNSW_EF_SEARCH}) against an exact scan,",
        f"over {EXACT_QUERIES} of them:",
        "",
        "| memories | load | HNSW build | search p50 / p95 | recall@10 vs exact |",
        "|---:|---:|---:|---:|---:|",
        *[
            f"| {s.size:,} | {s.insert_s:.0f} s | {s.index_s:.0f} s | {s.server.cell()} ms | {s.recall10:.3f} |"
            for s in r.searches
        ],
        "",
    ]
    biggest = max(r.searches, key=lambda s: s.size, default=None)
    if biggest is not None:
        lines += [
            f"- At {biggest.size:,}: search p50 at most {TARGET_SEARCH_MS:.0f} ms: "
            f"{met(biggest.server.p50 <= TARGET_SEARCH_MS)}; recall@10 at least {TARGET_RECALL}: "
            f"{met(biggest.recall10 >= TARGET_RECALL)}.",
            "",
        ]
    return lines


def main(argv: list[str] | None = None) -> int:
    """Print the section."""
    parser = argparse.ArgumentParser(prog="python -m bench.team", description=__doc__)
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES), help="search sizes, comma-separated")
    args = parser.parse_args(argv)
    sizes = tuple(int(s) for s in args.sizes.split(",") if s.strip())
    print("\n".join(render(run(sizes=sizes))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
