"""How counts read in what orcmem says to people: `1 memory`, `3 memories`."""


def plural(n: int, one: str, many: str | None = None) -> str:
    """`1 memory`, `3 memories` (`many` for words whose plural is not `one` + s)."""
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def duration(seconds: float) -> str:
    """A rough length of time: `40 s`, `12 min`, `3 h 20 min`."""
    if seconds < 90:
        return f"{max(round(seconds), 0)} s"
    minutes = round(seconds / 60)
    if minutes < 90:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"


def cost_text(tokens: int, dollars: float | None) -> str:
    """What a call or a period cost, in words: `12,345 tokens, $0.0190` (the dollars only where reported)."""
    money = f", ${dollars:.4f}" if dollars else ""
    return f"{plural(tokens, 'token')}{money}"
