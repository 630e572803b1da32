"""ensure_model and install_from: a model folder exists only when every pinned file verifies."""

from __future__ import annotations

import gzip
import os
import tarfile
import threading
import time
from pathlib import Path

import pytest

from orcmem.embed.model_files import (
    MINILM_ARCHIVE,
    MINILM_PINS,
    ModelPins,
    ensure_model,
    install_from,
    model_dir_problem,
)
from orcmem.embed.staging import staging_prefix
from orcmem.models.errors import ModelError
from tests.embed.support import (
    FAKE_FILES,
    Route,
    Server,
    archive_source,
    fake_model_archive,
    leftovers,
    special,
    tar_gz,
)


def test_the_real_pins_are_the_reference_ones() -> None:
    assert MINILM_ARCHIVE.pins is MINILM_PINS
    assert MINILM_PINS.name == "fast-all-MiniLM-L6-v2"
    assert MINILM_ARCHIVE.size == 83_180_180
    assert MINILM_ARCHIVE.url.startswith("https://storage.googleapis.com/qdrant-fastembed/")
    assert MINILM_ARCHIVE.sha256 == "2735afe656e156af64ed603dbb1c96f3cae7f937286a8feb27fff7fa979f6a77"
    assert sorted(MINILM_PINS.files) == [
        "config.json",
        "model.onnx",
        "special_tokens_map.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "vocab.txt",
    ]
    assert all(len(h) == 64 and h == h.lower() for h in MINILM_PINS.files.values())


def test_pins_cannot_be_changed_after_creation(fake_pins: ModelPins) -> None:
    with pytest.raises(TypeError):
        fake_pins.files["model.onnx"] = "0" * 64  # type: ignore[index]
    assert hash(fake_pins) == hash(ModelPins(fake_pins.name, fake_pins.model_id, dict(fake_pins.files)))


@pytest.mark.parametrize(
    ("name", "files"),
    [
        ("../up", {}),
        (".hidden", {}),
        ("a/b", {}),
        ("ok", {"../x": "0" * 64}),
        ("ok", {"/abs": "0" * 64}),
        ("ok", {"sub/../x": "0" * 64}),
        ("ok", {"x": "ABC"}),
        ("ok", {"x": "0" * 63}),
    ],
)
def test_pins_refuse_unsafe_names_and_malformed_hashes(name: str, files: dict[str, str]) -> None:
    with pytest.raises(ValueError):
        ModelPins(name=name, model_id="m", files=files)


def test_a_good_archive_installs_and_verifies(tmp_path: Path, server: Server, fake_pins: ModelPins) -> None:
    models = tmp_path / "models"
    source = archive_source(fake_pins, server, fake_model_archive())
    seen: list[tuple[int, int]] = []
    folder = ensure_model(models, source, progress=lambda d, t: seen.append((d, t)))
    assert folder == models / "fake-model"
    assert model_dir_problem(folder, fake_pins) is None
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == FAKE_FILES
    # The archive is deleted once unpacked: the verified folder is the steady state.
    assert leftovers(models) == ["fake-model"]
    assert seen[-1] == (source.size, source.size)
    # A second call finds it verified and downloads nothing.
    assert ensure_model(models, source) == folder
    assert server.requests == ["/model.tar.gz"]


def test_only_pinned_files_are_kept(tmp_path: Path, server: Server, fake_pins: ModelPins) -> None:
    data = fake_model_archive([("fake-model/extra.onnx_data", b"unpinned"), ("README", b"hi")])
    folder = ensure_model(tmp_path, archive_source(fake_pins, server, data))
    assert sorted(p.name for p in folder.iterdir()) == sorted(FAKE_FILES)


def test_an_archive_with_files_at_its_root_installs(tmp_path: Path, server: Server, fake_pins: ModelPins) -> None:
    data = tar_gz(list(FAKE_FILES.items()))
    folder = ensure_model(tmp_path, archive_source(fake_pins, server, data))
    assert model_dir_problem(folder, fake_pins) is None


def test_a_wrong_archive_hash_is_refused_and_nothing_is_left(
    tmp_path: Path, server: Server, fake_pins: ModelPins
) -> None:
    models = tmp_path / "models"
    data = fake_model_archive()
    source = archive_source(fake_pins, server, data)
    server.routes["/model.tar.gz"] = Route(body=data[:-1] + bytes([data[-1] ^ 0xFF]))
    with pytest.raises(ModelError, match="does not match its pinned SHA-256"):
        ensure_model(models, source)
    assert leftovers(models) == []


def test_http_404_is_a_clear_error_and_nothing_is_left(tmp_path: Path, server: Server, fake_pins: ModelPins) -> None:
    models = tmp_path / "models"
    source = archive_source(fake_pins, server, fake_model_archive())
    del server.routes["/model.tar.gz"]
    with pytest.raises(ModelError, match=r"The embedding model download failed with HTTP 404\."):
        ensure_model(models, source)
    assert leftovers(models) == []


def test_a_body_larger_than_the_pin_is_refused_early(tmp_path: Path, server: Server, fake_pins: ModelPins) -> None:
    models = tmp_path / "models"
    source = archive_source(fake_pins, server, fake_model_archive())
    server.routes["/model.tar.gz"] = Route(body=b"\x00" * (32 * 1024 * 1024), send_length=False)
    started = time.monotonic()
    with pytest.raises(ModelError, match="larger than the pinned archive"):
        ensure_model(models, source)
    assert time.monotonic() - started < 5
    assert leftovers(models) == []


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        ([("../evil", b"evil")], "outside the model folder"),
        ([("fake-model/../../evil", b"evil")], "outside the model folder"),
        ([special("fake-model/link", tarfile.SYMTYPE, "/etc/passwd")], "is a link"),
        ([special("fake-model/hard", tarfile.LNKTYPE, "fake-model/vocab.txt")], "is a link"),
        ([("fake-model/nested.gz", gzip.compress(b"payload"))], "Nested model archive compression"),
    ],
)
def test_an_unsafe_archive_with_the_pinned_hash_is_still_refused(
    tmp_path: Path, server: Server, fake_pins: ModelPins, extra: list, match: str
) -> None:
    models = tmp_path / "models"
    with pytest.raises(ModelError, match=match):
        ensure_model(models, archive_source(fake_pins, server, fake_model_archive(extra)))
    assert leftovers(models) == []
    assert not (tmp_path / "evil").exists()


def test_an_archive_missing_a_pinned_file_is_refused(tmp_path: Path, server: Server, fake_pins: ModelPins) -> None:
    data = tar_gz([(f"fake-model/{n}", d) for n, d in FAKE_FILES.items() if n != "vocab.txt"])
    with pytest.raises(ModelError, match="vocab.txt is missing"):
        ensure_model(tmp_path, archive_source(fake_pins, server, data))
    assert leftovers(tmp_path) == []


def test_an_archive_whose_files_do_not_match_the_pins_is_refused(
    tmp_path: Path, server: Server, fake_pins: ModelPins
) -> None:
    files = dict(FAKE_FILES, **{"tokenizer.json": b'{"fake": false}\n'})
    data = tar_gz([(f"fake-model/{n}", d) for n, d in files.items()])
    with pytest.raises(ModelError, match="tokenizer.json does not match its pinned SHA-256"):
        ensure_model(tmp_path, archive_source(fake_pins, server, data))
    assert leftovers(tmp_path) == []


def test_a_corrupted_model_folder_is_deleted_and_replaced(tmp_path: Path, server: Server, fake_pins: ModelPins) -> None:
    source = archive_source(fake_pins, server, fake_model_archive())
    folder = ensure_model(tmp_path, source)
    onnx = folder / "model.onnx"
    data = bytearray(onnx.read_bytes())
    data[10] ^= 0x01
    onnx.write_bytes(bytes(data))
    (folder / "stray-file").write_bytes(b"left by someone")
    assert model_dir_problem(folder, fake_pins) == "model.onnx does not match its pinned SHA-256"

    assert ensure_model(tmp_path, source) == folder
    assert model_dir_problem(folder, fake_pins) is None
    assert not (folder / "stray-file").exists()
    assert server.requests == ["/model.tar.gz", "/model.tar.gz"]
    assert leftovers(tmp_path) == ["fake-model"]


def test_a_corrupted_folder_is_deleted_even_when_reinstalling_fails(
    tmp_path: Path, server: Server, fake_pins: ModelPins
) -> None:
    source = archive_source(fake_pins, server, fake_model_archive())
    folder = ensure_model(tmp_path, source)
    (folder / "vocab.txt").unlink()
    del server.routes["/model.tar.gz"]
    with pytest.raises(ModelError, match="HTTP 404"):
        ensure_model(tmp_path, source)
    assert leftovers(tmp_path) == []


def test_a_symlinked_pinned_file_does_not_verify(tmp_path: Path, server: Server, fake_pins: ModelPins) -> None:
    folder = ensure_model(tmp_path, archive_source(fake_pins, server, fake_model_archive()))
    real = tmp_path / "vocab-elsewhere.txt"
    real.write_bytes(FAKE_FILES["vocab.txt"])
    (folder / "vocab.txt").unlink()
    (folder / "vocab.txt").symlink_to(real)
    assert model_dir_problem(folder, fake_pins) == "vocab.txt is missing"


def test_a_verified_archive_left_by_a_killed_install_is_used_without_downloading(
    tmp_path: Path, server: Server, fake_pins: ModelPins
) -> None:
    data = fake_model_archive()
    source = archive_source(fake_pins, server, data)
    source.archive_path(tmp_path).write_bytes(data)
    ensure_model(tmp_path, source)
    assert server.requests == []
    assert leftovers(tmp_path) == ["fake-model"]


def test_a_bad_archive_left_behind_is_replaced_by_a_download(
    tmp_path: Path, server: Server, fake_pins: ModelPins
) -> None:
    source = archive_source(fake_pins, server, fake_model_archive())
    source.archive_path(tmp_path).write_bytes(b"truncated")
    ensure_model(tmp_path, source)
    assert server.requests == ["/model.tar.gz"]


def test_leftovers_of_a_killed_install_are_cleaned_and_never_loaded(
    tmp_path: Path, server: Server, fake_pins: ModelPins
) -> None:
    # A staging folder with every file in place still is not the model folder: it is never looked at, and removed.
    half = tmp_path / f"{staging_prefix('fake-model')}abc123" / "ready"
    half.mkdir(parents=True)
    for name, data in FAKE_FILES.items():
        (half / name).write_bytes(data)
    (tmp_path / "fake-model.tar.gz.part").write_bytes(b"partial")
    assert model_dir_problem(tmp_path / "fake-model", fake_pins) == "the model folder is missing"
    ensure_model(tmp_path, archive_source(fake_pins, server, fake_model_archive()))
    assert leftovers(tmp_path) == ["fake-model"]


def test_concurrent_ensures_download_once(tmp_path: Path, server: Server, fake_pins: ModelPins) -> None:
    source = archive_source(fake_pins, server, fake_model_archive())
    results: list[Path | BaseException] = []

    def run() -> None:
        try:
            results.append(ensure_model(tmp_path, source))
        except BaseException as exc:  # pragma: no cover - reported by the assertion below
            results.append(exc)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert results == [tmp_path / "fake-model"] * 4
    assert server.requests == ["/model.tar.gz"]


# --- install_from ----------------------------------------------------------------------------------------------


def test_install_from_a_local_archive(tmp_path: Path, fake_pins: ModelPins) -> None:
    archive = tmp_path / "download.tar.gz"
    archive.write_bytes(fake_model_archive())
    models = tmp_path / "models"
    folder = install_from(archive, models, fake_pins)
    assert model_dir_problem(folder, fake_pins) is None
    assert archive.exists()  # the user's own file is left alone
    assert leftovers(models) == ["fake-model"]


def test_install_from_an_unpacked_folder(tmp_path: Path, fake_pins: ModelPins) -> None:
    source = tmp_path / "unpacked"
    source.mkdir()
    for name, data in FAKE_FILES.items():
        (source / name).write_bytes(data)
    folder = install_from(source, tmp_path / "models", fake_pins)
    assert model_dir_problem(folder, fake_pins) is None
    assert sorted(p.name for p in source.iterdir()) == sorted(FAKE_FILES)  # copied, not moved


def test_install_from_refuses_altered_files_and_keeps_the_good_folder(tmp_path: Path, fake_pins: ModelPins) -> None:
    models = tmp_path / "models"
    good = tmp_path / "good.tar.gz"
    good.write_bytes(fake_model_archive())
    folder = install_from(good, models, fake_pins)
    bad = tmp_path / "bad"
    bad.mkdir()
    for name, data in FAKE_FILES.items():
        (bad / name).write_bytes(data + b"!")
    with pytest.raises(ModelError, match="does not match its pinned SHA-256"):
        install_from(bad, models, fake_pins)
    assert model_dir_problem(folder, fake_pins) is None
    assert leftovers(models) == ["fake-model"]


def test_install_from_refuses_a_symlinked_file(tmp_path: Path, fake_pins: ModelPins) -> None:
    source = tmp_path / "unpacked"
    source.mkdir()
    for name, data in FAKE_FILES.items():
        (source / name).write_bytes(data)
    (tmp_path / "real-vocab").write_bytes(FAKE_FILES["vocab.txt"])
    os.remove(source / "vocab.txt")
    (source / "vocab.txt").symlink_to(tmp_path / "real-vocab")
    with pytest.raises(ModelError, match="vocab.txt is missing"):
        install_from(source, tmp_path / "models", fake_pins)
    assert leftovers(tmp_path / "models") == []


def test_install_from_refuses_unsafe_archives(tmp_path: Path, fake_pins: ModelPins) -> None:
    archive = tmp_path / "evil.tar.gz"
    archive.write_bytes(fake_model_archive([("../../evil", b"x")]))
    with pytest.raises(ModelError, match="outside"):
        install_from(archive, tmp_path / "models", fake_pins)
    assert leftovers(tmp_path / "models") == []


def test_install_from_a_missing_path(tmp_path: Path, fake_pins: ModelPins) -> None:
    with pytest.raises(ModelError, match="does not exist"):
        install_from(tmp_path / "nope.tar.gz", tmp_path / "models", fake_pins)


def test_install_from_defaults_to_the_real_pins(tmp_path: Path) -> None:
    archive = tmp_path / "other.tar.gz"
    archive.write_bytes(fake_model_archive())
    with pytest.raises(ModelError, match="config.json is missing"):
        install_from(archive, tmp_path / "models")
