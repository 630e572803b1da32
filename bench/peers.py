"""Peers, side by side: orcmem's fused search against mem0, basic-memory and plain BM25, on the same data, offline.

Quality: the LoCoMo conversations and questions of `bench.locomo` (its loader and scorer), one memory per turn,
each conversation on its own. Latency: the synthetic memories and queries of `bench.search` at one size. Every
figure of a table comes from the same run, so the ratios to orcmem compare like with like.

Run alone with `.venv-test/bin/python -m bench.peers --size 1000` (peers: `pip install -e '.[bench]'`; basic-memory
gets its own venv, `.venv-peers`, made on first use).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from bench import locomo, peers_offline
from bench.common import Latency, embedding_source, latency, queries, synthetic_memories, time_call
from orcmem.models.constants import FUSION_WORD_WEIGHT

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo-dev.json"
PEERS_VENV = ROOT / ".venv-peers"
BASIC_MEMORY_PIN = "basic-memory==0.24.1"
LIMIT = 10  # results asked of every tool, for quality and latency alike
LATENCY_QUERIES = 200  # as bench.search
PEER_BUDGET_S = 30.0  # a slow peer's latency loop stops after this much search time...
MIN_SAMPLES = 30  # ...once it has at least this many timings
ORCMEM = "orcmem fused"
MEM0 = "mem0, vectors"
MEM0_HYBRID = "mem0, vectors + BM25"
BASIC_MEMORY = "basic-memory, FTS5"
BM25 = "rank-bm25 BM25Okapi"
_TOKEN = re.compile(r"\w+")


@dataclass
class Peer:
    """One tool: what it is, its version, exactly how it was set up, and why it could not run (if so)."""

    name: str
    what: str
    version: str
    setup: list[str]
    reason: str | None = None


@dataclass
class PeersResult:
    """Everything `render` prints; quality and latency rows start with orcmem's own."""

    size: int
    questions: int
    conversations: int
    peers: list[Peer]
    quality: list[locomo.Scores]
    latency: list[tuple[str, Latency]]
    notes: list[str] = field(default_factory=list)
    network_attempts: list[str] = field(default_factory=list)
    seconds: float = 0.0
    load: tuple[float, float] = (0.0, 0.0)  # the machine's 1-minute load average at the start and the end


class _Recorder:
    """Hands `locomo.load` the service, and keeps each stored memory (id, title, body) by project id."""

    def __init__(self, svc) -> None:
        self.svc = svc
        self.docs: dict[str, list[tuple[str, str, str]]] = {}

    def project(self, location):
        """The service's project for `location`."""
        return self.svc.project(location)

    def record(self, project, memory):
        """Record through the service; a turn merged into an earlier identical one is kept once."""
        result = self.svc.record(project, memory)
        if not result.merged:
            stored = result.memory
            self.docs.setdefault(project.id, []).append((stored.id, stored.title, stored.body))
        return result


def tokens(text: str) -> list[str]:
    """Plain BM25 tokens: lowercased runs of word characters."""
    return _TOKEN.findall(text.lower())


class Bm25Index:
    """rank-bm25's BM25Okapi over one corpus, returning the ids of the best documents that match at all."""

    def __init__(self, docs: Sequence[tuple[str, str]]) -> None:
        """Index (id, text) pairs."""
        from rank_bm25 import BM25Okapi

        self.ids = [doc_id for doc_id, _ in docs]
        self.bm25 = BM25Okapi([tokens(text) for _, text in docs])

    def search(self, query: str, limit: int = LIMIT) -> list[str]:
        """Ids of the top `limit` documents by BM25 score, documents scoring 0 left out."""
        import numpy as np

        scores = self.bm25.get_scores(tokens(query))
        top = np.argsort(-scores, kind="stable")[:limit]
        return [self.ids[i] for i in top if scores[i] > 0]


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


# --- basic-memory, in its own venv -----------------------------------------------------------------------------
def _python312() -> Path | None:
    """A Python >= 3.12 to build the peers venv with: on PATH, else in pyenv's versions."""
    for name in ("python3.13", "python3.12"):
        found = shutil.which(name)
        if found:
            return Path(found)
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates = sorted(pyenv.glob("3.1[2-9]*/bin/python"), reverse=True) if pyenv.is_dir() else []
    return candidates[0] if candidates else None


def peers_python(venv: Path = PEERS_VENV) -> tuple[Path | None, str | None]:
    """The venv's Python with basic-memory at its pinned version, creating the venv if needed; or None and why."""
    python = venv / "bin" / "python"
    wanted = BASIC_MEMORY_PIN.split("==")[1]
    probe = [str(python), "-c", "import importlib.metadata as m; print(m.version('basic-memory'))"]
    if python.exists() and subprocess.run(probe, capture_output=True, text=True).stdout.strip() == wanted:
        return python, None
    base = _python312()
    if base is None:
        return None, "basic-memory 0.24 requires Python >= 3.12; no python3.12/3.13 on PATH or in ~/.pyenv/versions."
    print(f"creating {venv} with {base} and installing {BASIC_MEMORY_PIN} (once)...", flush=True)
    made = subprocess.run([str(base), "-m", "venv", str(venv)], capture_output=True, text=True)
    if made.returncode != 0:
        return None, f"`{base} -m venv` failed: {made.stderr.strip()[-300:]}"
    (venv / ".gitignore").write_text("*\n")  # keep the venv out of git status
    pip = [str(python), "-m", "pip", "install", "--quiet", BASIC_MEMORY_PIN]
    installed = subprocess.run(pip, capture_output=True, text=True, timeout=1800)
    if installed.returncode != 0:
        return None, f"`pip install {BASIC_MEMORY_PIN}` failed: {installed.stderr.strip()[-300:]}"
    return python, None


class BasicMemoryRun:
    """The basic-memory helper process: indexes at once, times its queries when `results()` lets it."""

    def __init__(self, python: Path, work: Path, corpora: list[dict]) -> None:
        """Write the corpora and start indexing them (one basic-memory home, and so one database, per run)."""
        work.mkdir(parents=True, exist_ok=True)
        self.source, self.target = work / "in.json", work / "out.json"
        self.source.write_text(json.dumps({"limit": LIMIT, "corpora": corpora}))
        script = Path(__file__).with_name("peers_basic_memory.py")
        self.process = subprocess.Popen(
            [str(python), str(script), str(self.source), str(self.target)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def results(self) -> dict:
        """Wait for the index, let the helper time its queries alone, and return its output."""
        assert self.process.stdin is not None and self.process.stdout is not None
        line = self.process.stdout.readline().strip()
        if line == "indexed":
            self.process.stdin.write("go\n")
            self.process.stdin.flush()
        self.process.stdin.close()
        self.process.stdout.read()
        if self.process.wait() != 0 or not self.target.exists():
            raise RuntimeError(f"the basic-memory helper failed (exit {self.process.returncode}); see its stderr")
        return json.loads(self.target.read_text())


# --- the run ---------------------------------------------------------------------------------------------------
def _timed(search: Callable[[str], object], texts: Sequence[str], budget: float | None) -> Latency:
    """p50/p95 of `search` over `texts` after 3 warm-up calls; with a budget, stop once it is spent."""
    for text in texts[:3]:
        search(text)
    timings: list[float] = []
    for text in texts:
        timings.append(time_call(lambda text=text: search(text)))
        if budget is not None and sum(timings) > budget and len(timings) >= MIN_SAMPLES:
            break
    return latency(timings)


def _embed_all(model, texts: Sequence[str]) -> dict[str, list[float]]:
    """Vectors of the distinct texts, in batches of 32 (not timed: it is the same work for every tool)."""
    distinct = list(dict.fromkeys(texts))
    vectors: dict[str, list[float]] = {}
    for start in range(0, len(distinct), 32):
        batch = distinct[start : start + 32]
        vectors.update(zip(batch, model.embed_documents(batch), strict=True))
    return vectors


def run(locomo_path: Path, size: int = 10_000) -> PeersResult:
    """Measure orcmem and every peer that can run here: LoCoMo quality, and search latency at `size` memories."""
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    bm_python, bm_reason = peers_python()  # pip may reach PyPI here, before the guard
    work = Path(tempfile.mkdtemp(prefix="orcmem-peers-"))
    attempts: list[str] = []
    try:
        # MEM0_DIR: mem0 writes a config.json there, never in ~/.mem0.
        with peers_offline.offline_env(MEM0_DIR=str(work / "mem0-home")), peers_offline.no_network(attempts):
            result = _run(locomo_path, size, work, bm_python, bm_reason)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result.network_attempts = attempts + result.network_attempts
    result.seconds = time.perf_counter() - started
    result.load = (load_before, os.getloadavg()[0])
    return result


def _run(locomo_path: Path, size: int, work: Path, bm_python: Path | None, bm_reason: str | None) -> PeersResult:
    from orcmem.embed.embedder import load_embedder
    from orcmem.embed.model_files import ensure_model
    from orcmem.embed.worker import worker_embedder
    from orcmem.host.workspace import Location
    from orcmem.service.memory_service import MemoryService

    clock = time.perf_counter
    t0 = clock()

    def step(text: str) -> None:
        print(f"  [{clock() - t0:5.0f} s] {text}", file=sys.stderr, flush=True)

    source = embedding_source()
    models = work / "models"
    ensure_model(models, source)
    model_id = source.pins.model_id

    step("LoCoMo and synthetic memories into orcmem...")
    conv_svc = MemoryService.open(work / "locomo-home")
    conv_svc.settings.set_enabled(True)
    conv_svc.settings.set_embedding_model(model_id)
    recorder = _Recorder(conv_svc)
    questions = locomo.load(locomo_path, recorder, work / "locomo")  # type: ignore[arg-type]
    conversations = recorder.docs  # project id -> [(memory id, title, body)]
    conv_name = {project_id: f"conv-{n}" for n, project_id in enumerate(conversations)}
    asked: dict[str, list[str]] = {project_id: [] for project_id in conversations}
    for question in questions:
        asked[question.project.id].append(question.text)

    lat_svc = MemoryService.open(work / "latency-home")
    lat_svc.settings.set_enabled(True)
    lat_svc.settings.set_embedding_model(model_id)
    lat_project = lat_svc.project(Location(str(work / "bench"), str(work / "bench"), "bench"))
    with lat_svc.store.db.transaction():
        stored = [lat_svc.record(lat_project, m, embed=False).memory for m in synthetic_memories(size)]
    synthetic = [(m.id, m.title, m.body) for m in stored]
    probe = queries(LATENCY_QUERIES)

    basic: list[BasicMemoryRun] = []
    if bm_python is not None:
        step("basic-memory: indexing in two processes (LoCoMo, latency) while the parent embeds...")
        corpora = [
            {"name": conv_name[p], "docs": [[t, b] for _, t, b in docs], "queries": asked[p], "time_budget_s": None}
            for p, docs in conversations.items()
        ]
        basic.append(BasicMemoryRun(bm_python, work / "bm-locomo", corpora))
        # A database of its own, as orcmem's: FTS5 statistics and scan costs then cover these memories alone.
        latency_corpus = {"name": "latency", "docs": [[t, b] for _, t, b in synthetic], "queries": probe}
        basic.append(
            BasicMemoryRun(bm_python, work / "bm-latency", [{**latency_corpus, "time_budget_s": PEER_BUDGET_S}])
        )

    step("embedding every memory once (MiniLM, batches of 32)...")
    model = load_embedder(models, source)
    text_of = lambda title, body: f"{title}\n{body}"  # noqa: E731 - what orcmem embeds for a memory
    all_docs = [d for docs in conversations.values() for d in docs] + synthetic
    vectors = _embed_all(model, [text_of(t, b) for _, t, b in all_docs])
    for svc, docs in ((conv_svc, [d for ds in conversations.values() for d in ds]), (lat_svc, synthetic)):
        with svc.store.db.transaction():
            for memory_id, title, body in docs:
                svc.store.vectors.put(memory_id, vectors[text_of(title, body)], model_id, svc.clock())
    embedder = worker_embedder(models, source)
    embedder.wait_ready(60)
    conv_svc.use_embedder(embedder)
    lat_svc.use_embedder(embedder)

    peers = _describe(size, bm_python, bm_reason)
    by_name = {p.name: p for p in peers}
    mem0_sets: dict[str, tuple[dict, object]] = {}  # name -> (per-conversation peers, latency peer)
    if by_name[MEM0].reason is None:
        from bench.peers_mem0 import open_mem0

        for name, hybrid in ((MEM0, False), (MEM0_HYBRID, True)):
            step(f"{name}: add(infer=False)...")
            per_conv = {}
            for project_id, docs in conversations.items():
                peer = open_mem0(work, f"{conv_name[project_id]}-{hybrid}", model.embed_query, vectors, hybrid=hybrid)
                peer.add(conv_name[project_id], [(i, text_of(t, b)) for i, t, b in docs])
                per_conv[project_id] = peer
            big = open_mem0(work, f"latency-{hybrid}", model.embed_query, vectors, hybrid=hybrid)
            big.add("bench", [(i, text_of(t, b)) for i, t, b in synthetic])
            mem0_sets[name] = (per_conv, big)
    bm25_sets: tuple[dict, Bm25Index] | None = None
    if by_name[BM25].reason is None:
        step("rank-bm25: indexing...")
        per_conv = {p: Bm25Index([(i, text_of(t, b)) for i, t, b in docs]) for p, docs in conversations.items()}
        bm25_sets = (per_conv, Bm25Index([(i, text_of(t, b)) for i, t, b in synthetic]))

    notes: list[str] = []
    net: list[str] = []
    bm_ranked: dict[tuple[str, str], list[str]] = {}
    bm_latency: Latency | None = None
    if basic:
        step("basic-memory: searching (alone on the machine)...")
        try:
            outs = [run.results() for run in basic]
        except RuntimeError as exc:
            by_name[BASIC_MEMORY].reason = str(exc)
        else:
            out = outs[0]
            results = {name: found for o in outs for name, found in o["results"].items()}
            by_name[BASIC_MEMORY].version = out["version"]
            by_name[BASIC_MEMORY].setup.insert(0, f"Ran on Python {out['python']}; semantic search: {out['semantic']}.")
            net += [f"basic-memory: {host}" for o in outs for host in o["network_attempts"]]
            for project_id, docs in conversations.items():
                answers = results[conv_name[project_id]]["ranked"]
                for text, ranked in zip(asked[project_id], answers, strict=True):
                    bm_ranked[(project_id, text)] = [docs[i][0] for i in ranked]
            bm_latency = latency(results["latency"]["timings_s"])
            errors = [e for found in results.values() for e in found["errors"]]
            if errors:
                notes.append(f"basic-memory rejected {len(errors)} queries (scored as empty), e.g. {errors[0]}")
            notes.append(
                f"basic-memory indexed the {size:,} notes in {outs[1]['index_s']['latency']:.0f} s "
                f"and the {sum(len(d) for d in conversations.values()):,} LoCoMo turns in "
                f"{sum(out['index_s'].values()):.0f} s (entity rows and `index_entities`, while the parent embedded)."
            )

    step("quality on LoCoMo...")
    quality = [
        locomo.score(ORCMEM, questions, lambda q: [h.memory.id for h in conv_svc.search.hits(q.project, q.text, LIMIT)])
    ]
    for name, (per_conv, _) in mem0_sets.items():
        quality.append(
            locomo.score(
                name, questions, lambda q, pc=per_conv: pc[q.project.id].search(conv_name[q.project.id], q.text, LIMIT)
            )
        )
    if bm_ranked:
        quality.append(locomo.score(BASIC_MEMORY, questions, lambda q: bm_ranked[(q.project.id, q.text)]))
    if bm25_sets is not None:
        quality.append(locomo.score(BM25, questions, lambda q: bm25_sets[0][q.project.id].search(q.text)))

    step(f"latency at {size:,} memories...")
    lat_svc.search.hits(lat_project, probe[0])  # warm the in-memory vector copy and SQLite's page cache
    timings = [(ORCMEM, _timed(lambda q: lat_svc.search.hits(lat_project, q, LIMIT), probe, None))]
    for name, (_, big) in mem0_sets.items():
        timings.append((name, _timed(lambda q, big=big: big.search("bench", q, LIMIT), probe, PEER_BUDGET_S)))
    if bm_latency is not None:
        timings.append((BASIC_MEMORY, bm_latency))
    if bm25_sets is not None:
        timings.append((BM25, _timed(bm25_sets[1].search, probe, PEER_BUDGET_S)))
    step("done.")
    conv_svc.store.close()
    lat_svc.close()
    return PeersResult(size, len(questions), len(conversations), peers, quality, timings, notes, net)


def _describe(size: int, bm_python: Path | None, bm_reason: str | None) -> list[Peer]:
    """Every tool and exactly how it is configured; a peer whose package is missing gets its reason."""
    mem0_version, qdrant = _version("mem0ai"), _version("qdrant-client")
    mem0_missing = None if mem0_version != "not installed" else "mem0ai is not installed: pip install -e '.[bench]'."
    common_mem0 = [
        f"`Memory.from_config`: vector store `qdrant` (qdrant-client {qdrant}) in local mode, held in memory "
        '(`path=":memory:"`; mem0\'s default is the same local mode on disk, `/tmp/qdrant`); one collection per '
        f"LoCoMo conversation and one for the {size:,} memories, each searched with the `user_id` filter mem0 "
        "requires.",
        "Embedder: a subclass of mem0's `EmbeddingBase` running orcmem's `FastEmbedEmbedder` on the same int8 "
        "all-MiniLM-L6-v2 files (same mean pooling, truncation and ONNX session). Document vectors are made once, "
        "in batches of 32, and handed back when `add` asks for them; every query is embedded at search time, "
        "inside the timed call.",
        "`add(messages, user_id=..., infer=False)`, 500 messages per call: mem0 stores each message verbatim as "
        "one memory (`title\\nbody`, the text orcmem embeds); no LLM call (the OpenAI client is built with a "
        'dummy key and never used), history database `":memory:"`, `MEM0_TELEMETRY=False`.',
        f"`search(query, top_k={LIMIT}, filters={{'user_id': ...}})`, default threshold 0.1, no reranker.",
        "No spaCy: `mem0ai[nlp]` needs the `en_core_web_sm` model, which is not on PyPI (only third-party "
        "re-uploads) and which mem0 would try to download; mem0 then uses raw text for BM25 and no entity boost.",
    ]
    return [
        Peer(
            ORCMEM,
            "orcmem's own search, the comparison point",
            _version("orcmem"),
            [
                f"`service.search.hits(project, query, limit={LIMIT})`: FTS5 words and MiniLM k-NN, 40 candidates "
                f"each, fused by score (words weighted {FUSION_WORD_WEIGHT}) with type, confidence and recency "
                "factors; the query embedded beside the word search, as the MCP server does.",
            ],
        ),
        Peer(
            MEM0,
            "mem0's open-source library (`mem0ai`), raw memories, vector search",
            mem0_version,
            [
                *common_mem0,
                "Keyword half off: mem0's qdrant store loads fastembed's `Qdrant/bm25` files from Hugging Face, "
                "which this machine cannot reach, and falls back to vectors alone (set here up front, so no "
                "download is attempted).",
            ],
            mem0_missing,
        ),
        Peer(
            MEM0_HYBRID,
            "the same mem0, with its BM25 keyword half rebuilt offline",
            mem0_version,
            [
                *common_mem0,
                "BM25 encoder: fastembed's `Bm25` (the code behind `Qdrant/bm25`: Snowball stemmer, k = 1.2, "
                "b = 0.75) on a local folder holding that repository's empty config.json, with no stop words (the "
                "repository's stop-word files cannot be fetched); qdrant applies IDF. mem0 adds a "
                "sigmoid-normalised BM25 score to each vector candidate's similarity.",
            ],
            mem0_missing,
        ),
        Peer(
            BASIC_MEMORY,
            "basic-memory (local Markdown knowledge base with an MCP server): its SQLite search service",
            BASIC_MEMORY_PIN.split("==")[1],
            [
                "Own venv `.venv-peers` (basic-memory 0.24 requires Python >= 3.12, orcmem's venv is 3.11), made "
                "by this module on first use and run as a subprocess that indexes while the parent embeds, then "
                "times its searches while the parent waits.",
                "Private home (`BASIC_MEMORY_CONFIG_DIR` in a temporary folder), SQLite backend, one project per "
                f"conversation and one for the {size:,} memories; each memory is a note (title, content = body).",
                "Notes enter as entity rows through its `EntityRepository`, and its `SearchService.index_entities` "
                "writes their FTS5 rows. Its usual path, Markdown files indexed by its project sync, took 105 s for "
                "the 419 turns of the first conversation here (and 70 s for 500 short notes, growing faster than "
                "linearly): too slow for 10,000. Checked once on that conversation: the sync wrote the same search "
                "rows and gave the same top 10 for the questions tried.",
                f"`SearchService.search(SearchQuery(text=query), limit={LIMIT})` in its default `fts` mode: FTS5 "
                "with every term first, then a relaxed OR of prefixes (its stop words dropped) when that finds "
                "nothing, ranked by `bm25()` under an OR of per-column MATCH constraints. On these questions the "
                "relaxed query is the usual case, and that ranking misses the obvious turn: for *When did Caroline "
                "go to the LGBTQ support group?* the turn *I went to a LGBTQ support group yesterday* is not in its "
                "top 10, while a plain FTS5 MATCH of the same relaxed query on the same table ranks it first.",
                "Vector and hybrid modes cannot run here: this Python's sqlite3 cannot load extensions "
                "(sqlite-vec), so basic-memory runs keyword-only (its documented fallback), and its default model "
                "(bge-small-en-v1.5) would come from Hugging Face.",
            ],
            bm_reason if bm_python is None else None,
        ),
        Peer(
            BM25,
            "plain BM25, the textbook baseline",
            _version("rank-bm25"),
            [
                "`BM25Okapi` with its defaults (k1 = 1.5, b = 0.75, epsilon = 0.25) over lowercased `\\w+` tokens of "
                "`title\\nbody`, no stemming, no stop words; one index per conversation and one for the "
                f"{size:,} memories; top {LIMIT} by `get_scores`, documents scoring 0 left out.",
            ],
            None
            if _version("rank-bm25") != "not installed"
            else "rank-bm25 is not installed: pip install -e '.[bench]'.",
        ),
    ]


# --- the report ------------------------------------------------------------------------------------------------
def _ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}x" if base else "n/a"


def render(result: PeersResult) -> list[str]:
    """The `## Peers, side by side` section as markdown lines."""
    lines = [
        "## Peers, side by side",
        "",
        f"orcmem against other local memory tools, all measured in one run of `bench.peers` ({result.seconds:.0f} s; "
        f"1-minute load average {result.load[0]:.1f} at the start, {result.load[1]:.1f} at the end, on "
        f"{os.cpu_count()} cores), offline: every connection or name lookup outside the machine is refused and "
        f"counted ({len(result.network_attempts)} attempted).",
        "",
        "| tool | what it is | version |",
        "|---|---|---|",
        *[f"| {p.name} | {p.what} | {p.version} |" for p in result.peers],
        "",
    ]
    for peer in result.peers:
        lines.append(f"**{peer.name}**" + (f": could not run here. {peer.reason}" if peer.reason else ""))
        lines += [f"- {line}" for line in peer.setup] + [""]
    base = result.quality[0]
    lines += [
        f"Retrieval quality on LoCoMo: the {result.conversations} conversations and {result.questions} questions of "
        "the section above, one memory per dialogue turn, each conversation searched on its own. Each cell: the "
        "value (the ratio to orcmem fused).",
        "",
        "| tool | recall@5 | recall@8 | recall@10 | nDCG@10 |",
        "|---|---:|---:|---:|---:|",
    ]
    for s in result.quality:
        cells = [f"{s.recall[k]:.3f} ({_ratio(s.recall[k], base.recall[k])})" for k in locomo.KS]
        cells.append(f"{s.ndcg10:.3f} ({_ratio(s.ndcg10, base.ndcg10)})")
        lines.append(f"| {s.name} | " + " | ".join(cells) + " |")
    fused = result.latency[0][1]
    lines += [
        "",
        f"Search latency at {result.size:,} memories (the synthetic memories and queries of *Search latency*): one "
        f"search call each, top {LIMIT}, query embedding included where the tool embeds, in one process per tool "
        "that has loaded everything. Milliseconds; in brackets, the ratio to orcmem fused. Slow tools stop after "
        f"{PEER_BUDGET_S:.0f} s of searching (at least {MIN_SAMPLES} queries).",
        "",
        "| tool | p50 | p95 | queries timed |",
        "|---|---:|---:|---:|",
        *[
            f"| {name} | {t.p50:.2f} ({_ratio(t.p50, fused.p50)}) | {t.p95:.2f} ({_ratio(t.p95, fused.p95)}) "
            f"| {t.samples} |"
            for name, t in result.latency
        ],
        "",
    ]
    lines += [f"- {note}" for note in result.notes]
    if result.network_attempts:
        lines.append(f"- Refused network attempts: {', '.join(sorted(set(result.network_attempts)))}.")
    return lines + [""]


def main(argv: list[str] | None = None) -> int:
    """Run the peers alone and print the section."""
    parser = argparse.ArgumentParser(prog="python -m bench.peers", description=__doc__)
    parser.add_argument("--size", type=int, default=10_000, help="memories for the latency table")
    parser.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO, help="LoCoMo file (shared/data/locomo)")
    args = parser.parse_args(argv)
    if not args.locomo.is_file():
        print(f"{args.locomo} not found", file=sys.stderr)
        return 1
    print("\n".join(render(run(args.locomo, args.size))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
