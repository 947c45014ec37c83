"""The arithmetic of the figures, on the strings the tools print (a median is one of the
values as printed, so the report shows what was measured, not a reformatted copy)."""


def num(text) -> float:
    """A value as awk reads it: a number, else 0."""
    try:
        return float(text)
    except (TypeError, ValueError):
        return 0.0


def parse(line: str) -> dict:
    """The name=value pairs of a tool's result line (the last of a name wins)."""
    pairs = {}
    for word in (line or "").split():
        name, eq, value = word.partition("=")
        if eq:
            pairs[name] = value
    return pairs


def field(line: str, name: str) -> str:
    """The value of NAME=value in LINE, "" when it is not there."""
    return parse(line).get(name, "")


def ratio(a, b) -> str:
    """A / B to three decimals; "n/a" when B is not above 0."""
    return f"{num(a) / num(b):.3f}" if num(b) > 0 else "n/a"


def _sorted(values) -> list:
    return sorted((str(v) for v in values), key=num)


def median(values) -> str:
    """The middle value (the lower middle of an even count)."""
    ordered = _sorted(values)
    return ordered[(len(ordered) + 1) // 2 - 1] if ordered else ""


def spread(values) -> str:
    """"min-max" of the values."""
    ordered = _sorted(values)
    return f"{ordered[0]}-{ordered[-1]}" if ordered else ""


def highest(values) -> str:
    ordered = _sorted(values)
    return ordered[-1] if ordered else ""


def percentile(values, p: float) -> str:
    """The nearest-rank percentile P (0-1) of the values."""
    ordered = _sorted(values)
    if not ordered:
        return ""
    rank = int(len(ordered) * p + 0.999)
    return ordered[max(rank, 1) - 1]
