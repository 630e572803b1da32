"""How counts read in what orcmem says to people: `1 memory`, `3 memories`."""


def plural(n: int, one: str, many: str | None = None) -> str:
    """`1 memory`, `3 memories` (`many` for words whose plural is not `one` + s)."""
    return f"{n:,} {one if n == 1 else (many or one + 's')}"
