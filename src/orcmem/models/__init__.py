"""The lowest layer: constants, enums and dataclasses, with no dependencies on the rest of orcmem."""
