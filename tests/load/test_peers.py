"""The peers benchmark: its offline guard refuses the network, each peer answers real searches, the report reads."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from importlib.util import find_spec
from pathlib import Path

import pytest

from bench import locomo, peers, peers_offline
from bench.common import Latency

DOCS = [
    ("a", "pytest times out in parse_config\nRaise the timeout to 60 s when pytest hangs in CI."),
    ("b", "docker leaks memory in the importer\nPin the version of the base image."),
    ("c", "redis needs a restart after upgrade\nRetry with backoff while redis restarts."),
]


def test_the_guard_refuses_and_counts_other_hosts_but_lets_loopback_through() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    accepted = threading.Thread(target=lambda: server.accept()[0].close(), daemon=True)
    accepted.start()
    attempts: list[str] = []
    with peers_offline.no_network(attempts):
        with pytest.raises(OSError, match="refused a connection to 192.0.2.1"):
            socket.create_connection(("192.0.2.1", 80), timeout=1)
        with pytest.raises(OSError, match="pypi.org"):
            socket.getaddrinfo("pypi.org", 443)
        socket.create_connection(server.getsockname(), timeout=5).close()  # loopback still works
    accepted.join(timeout=5)
    server.close()
    assert not accepted.is_alive()
    assert attempts == ["192.0.2.1", "pypi.org"]
    assert socket.getaddrinfo.__module__ == "socket"  # restored on the way out


def test_the_offline_switches_hold_inside_the_block_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
    monkeypatch.delenv("MEM0_TELEMETRY", raising=False)
    with peers_offline.offline_env(MEM0_DIR="/nowhere"):
        assert os.environ["MEM0_TELEMETRY"] == "False" and os.environ["HF_HUB_OFFLINE"] == "1"
        assert os.environ["MEM0_DIR"] == "/nowhere" and "HTTPS_PROXY" not in os.environ
    assert "MEM0_TELEMETRY" not in os.environ and "MEM0_DIR" not in os.environ
    assert os.environ["HTTPS_PROXY"] == "http://proxy.invalid:3128"


@pytest.mark.skipif(find_spec("rank_bm25") is None, reason="rank-bm25 is not installed (pip install -e '.[bench]')")
def test_plain_bm25_ranks_the_matching_document_first_and_drops_non_matches() -> None:
    index = peers.Bm25Index(DOCS)
    assert index.search("why does redis need a restart") == ["c"]
    assert index.search("PYTEST timeout") == ["a"]
    assert index.search("kubernetes") == []


@pytest.mark.skipif(find_spec("mem0") is None, reason="mem0ai is not installed (pip install -e '.[bench]')")
def test_mem0_stores_raw_memories_and_searches_them_with_the_given_embedder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.embedders import HashingEmbedder

    for name, value in peers_offline.OFFLINE_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("MEM0_DIR", str(tmp_path / "mem0"))
    from bench.peers_mem0 import open_mem0

    embedder = HashingEmbedder()
    queries: list[str] = []

    def embed_query(text: str) -> list[float]:
        queries.append(text)
        return embedder.embed_query(text)

    known = dict(zip([text for _, text in DOCS], embedder.embed_documents([text for _, text in DOCS]), strict=True))
    attempts: list[str] = []
    with peers_offline.no_network(attempts):
        for hybrid in (False, True):
            peer = open_mem0(tmp_path, f"t{hybrid}", embed_query, known, hybrid=hybrid)
            peer.add("u1", DOCS)
            peer.add("u2", [("z", DOCS[2][1])])  # another user's copy must never come back for u1
            found = peer.search("u1", DOCS[2][1], limit=3)
            assert found[0] == "c" and "z" not in found and set(found) <= {"a", "b", "c"}
    assert queries == [DOCS[2][1], DOCS[2][1]]  # documents came from `known`; only the queries were embedded
    assert attempts == []


@pytest.mark.skipif(
    not (peers.PEERS_VENV / "bin" / "python").exists(), reason="no .venv-peers (bench.peers makes it on first use)"
)
def test_the_basic_memory_helper_indexes_then_waits_then_answers(tmp_path: Path) -> None:
    corpus = {
        "name": "c0",
        "docs": [[text.split("\n")[0], text.split("\n")[1]] for _, text in DOCS],
        "queries": ["redis restart", "docker leaks memory in the importer", "why would kubernetes crash"],
        "time_budget_s": None,
    }
    (tmp_path / "in.json").write_text(json.dumps({"limit": 10, "corpora": [corpus]}))
    script = Path(peers.__file__).with_name("peers_basic_memory.py")
    helper = subprocess.Popen(
        [str(peers.PEERS_VENV / "bin" / "python"), str(script), str(tmp_path / "in.json"), str(tmp_path / "out.json")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert helper.stdout is not None and helper.stdin is not None
    assert helper.stdout.readline().strip() == "indexed"
    assert not (tmp_path / "out.json").exists()  # nothing is timed before the parent says so
    helper.stdin.write("go\n")
    helper.stdin.close()
    assert helper.stdout.read().strip() == "done"
    assert helper.wait(timeout=60) == 0
    out = json.loads((tmp_path / "out.json").read_text())
    found = out["results"]["c0"]
    assert found["ranked"][0][0] == 2 and found["ranked"][1][0] == 1
    assert found["ranked"][2] == [] and found["errors"] == []
    assert len(found["timings_s"]) == 3 and out["network_attempts"] == []


def test_the_section_names_every_tool_its_setup_and_ratios_to_orcmem() -> None:
    result = peers.PeersResult(
        size=10_000,
        questions=760,
        conversations=5,
        peers=[
            peers.Peer(peers.ORCMEM, "orcmem", "0.1.0", ["`MemoryService.search`"]),
            peers.Peer(peers.BM25, "plain BM25", "0.2.2", ["BM25Okapi"]),
            peers.Peer(peers.BASIC_MEMORY, "basic-memory", "0.24.1", ["own venv"], reason="no Python 3.12 here."),
        ],
        quality=[
            locomo.Scores(peers.ORCMEM, {5: 0.6, 8: 0.7, 10: 0.8}, 0.5),
            locomo.Scores(peers.BM25, {5: 0.3, 8: 0.35, 10: 0.4}, 0.25),
        ],
        latency=[(peers.ORCMEM, Latency(10.0, 20.0, 200)), (peers.BM25, Latency(5.0, 30.0, 200))],
        notes=["a note"],
        network_attempts=["pypi.org"],
        seconds=300.0,
        load=(1.5, 2.5),
    )
    text = "\n".join(peers.render(result))
    assert text.startswith("## Peers, side by side\n")
    assert f"**{peers.BASIC_MEMORY}**: could not run here. no Python 3.12 here." in text
    assert f"| {peers.BM25} | 0.300 (0.50x) | 0.350 (0.50x) | 0.400 (0.50x) | 0.250 (0.50x) |" in text
    assert f"| {peers.BM25} | 5.00 (0.50x) | 30.00 (1.50x) | 200 |" in text
    assert "(1 attempted)" in text and "- Refused network attempts: pypi.org." in text and "- a note" in text


def test_the_module_runs_standalone_and_says_when_locomo_is_missing(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.peers", "--locomo", str(tmp_path / "none.json")],
        capture_output=True,
        text=True,
        cwd=Path(peers.__file__).parents[1],
    )
    assert done.returncode == 1 and "none.json not found" in done.stderr
