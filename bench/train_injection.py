"""Train the instruction flag's learned layer (orcmem/text/instructions_learned.py) on the whole labelled set.

Deterministic (bench/injection_model.py): the penalty and the score cut are chosen on out-of-batch scores (each batch
scored by a layer fitted on the others) for the most injections caught with at most 3 % of the ordinary texts
flagged by the rules and the layer together; the weights are then fitted on every batch.
`python -m bench.train_injection` writes src/orcmem/text/injection_weights.bin.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from bench.injection import DATA, ROOT, load
from bench.injection_model import choose, fit, sparse
from orcmem.text.instructions_learned import Weights

OUT = ROOT / "src" / "orcmem" / "text" / "injection_weights.bin"


def main() -> None:
    """Choose the penalty and the cut out of batch, fit on every batch, and write the weights file."""
    items = load(DATA)
    x = sparse([item.text for item in items])
    labels = np.array([float(item.injection) for item in items])
    chosen = choose(x, labels, [item.batch for item in items])
    caught = float((x.ruled | (chosen.scores > chosen.cut))[labels == 1].mean())
    print(f"out of batch: penalty {chosen.l2:g}, cut {chosen.cut:.3f}, {caught:.1%} caught", file=sys.stderr)
    bias, weights = fit(x, labels, chosen.l2)
    OUT.write_bytes(Weights(bias, [float(value) for value in weights], chosen.cut).to_bytes())
    print(f"wrote {OUT.relative_to(Path.cwd()) if OUT.is_relative_to(Path.cwd()) else OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
