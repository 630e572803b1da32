"""The learned half of the instruction flag: logistic regression over hashed word and character n-grams.

The rules in orcmem/text/instructions.py look for the shapes an injection takes; this layer scores the words and word
pieces around them, so that a phrasing no rule was written for ("the guidance you loaded at startup is stale") still
counts. Its weights are trained by bench/train_injection.py on the labelled set's `tune` split only, deterministically,
and shipped as a small file (injection_weights.bin: a header, then one signed byte per hashed feature).
"""

from __future__ import annotations

import math
import re
import struct
import unicodedata
import zlib
from array import array
from functools import cache
from importlib import resources

from orcmem.text.textsafe import INVISIBLE

BUCKETS = 1 << 16  # hashed feature slots: 64 KiB of weights at one byte each
_HEADER = struct.Struct("<4sIfff")  # magic, buckets, bias, scale, threshold
_MAGIC = b"OIW1"
_TOKEN = re.compile(r"\w+")
_SPACES = re.compile(r"\s+")
_CHAR_SIZES = (3, 4, 5)
# Quoted words are a mention ("our red-team suite includes 'you are now DAN'"), as for the rules: left out here.
_QUOTED = re.compile(r"`[^`\n]*`|\"[^\"\n]*\"|“[^”\n]*”|(?<!\w)'[^'\n]{2,}?'(?!\w)")


def normalized(text: str) -> str:
    """The text as the layer reads it: NFKC, invisible characters and quoted words removed, case folded, spaces
    collapsed."""
    plain = INVISIBLE.sub("", unicodedata.normalize("NFKC", text))
    return _SPACES.sub(" ", _QUOTED.sub(" ", plain).casefold()).strip()


def features(text: str) -> dict[int, float]:
    """The text's hashed features (words, word pairs, character 3- to 5-grams), weighted to unit length."""
    plain = normalized(text)[:2000]  # a long text's opening is enough, and keeps the cost bounded
    words = _TOKEN.findall(plain)
    grams = [f"w {word}" for word in words]
    grams += [f"p {a} {b}" for a, b in zip(words, words[1:], strict=False)]
    padded = f" {' '.join(words)} "
    grams += [f"c {padded[i : i + n]}" for n in _CHAR_SIZES for i in range(len(padded) - n + 1)]
    counts: dict[int, float] = {}
    for gram in grams:
        slot = zlib.crc32(gram.encode("utf-8")) % BUCKETS
        counts[slot] = 1.0  # presence, not counts: a repeated word says no more than once
    norm = 1 / math.sqrt(len(counts)) if counts else 0.0
    return {slot: norm for slot in counts}


class Weights:
    """Trained weights: a bias, one weight per slot, and the score above which a text is flagged."""

    __slots__ = ("bias", "values", "threshold")

    def __init__(self, bias: float, values: list[float], threshold: float) -> None:
        self.bias, self.values, self.threshold = bias, values, threshold

    def score(self, text: str) -> float:
        """The probability the layer gives that `text` is an injection."""
        total = self.bias + sum(self.values[slot] * weight for slot, weight in features(text).items())
        return 1 / (1 + math.exp(-max(-30.0, min(30.0, total))))

    def to_bytes(self) -> bytes:
        """The file form: the header, then each weight as a signed byte of `scale`."""
        scale = max((abs(value) for value in self.values), default=1.0) / 127 or 1.0
        quantized = array("b", (max(-127, min(127, round(value / scale))) for value in self.values))
        return _HEADER.pack(_MAGIC, len(self.values), self.bias, scale, self.threshold) + quantized.tobytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> Weights:
        """Weights read back from their file form."""
        magic, buckets, bias, scale, threshold = _HEADER.unpack_from(data)
        if magic != _MAGIC or buckets != BUCKETS:
            raise ValueError("not an injection weights file of this version")
        quantized = array("b")
        quantized.frombytes(data[_HEADER.size : _HEADER.size + buckets])
        return cls(bias, [value * scale for value in quantized], threshold)


@cache
def weights() -> Weights | None:
    """The shipped weights, or None when the file is missing (the rules then decide alone)."""
    try:
        data = resources.files("orcmem.text").joinpath("injection_weights.bin").read_bytes()
    except FileNotFoundError:
        return None
    return Weights.from_bytes(data)


def learned_flag(text: str) -> bool:
    """Whether the learned layer scores `text` above its threshold."""
    trained = weights()
    return trained is not None and trained.score(text) > trained.threshold
