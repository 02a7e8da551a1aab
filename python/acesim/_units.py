"""Exact parsing of acesim quantities (times and sizes), mirroring crates/acesim/src/units.rs."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

__all__ = ["parse_time_ps", "parse_size_bytes", "format_time"]

_TIME_UNITS: dict[str, int] = {
    "ps": 1,
    "ns": 1_000,
    "us": 1_000_000,
    "µs": 1_000_000,
    "ms": 1_000_000_000,
    "s": 1_000_000_000_000,
}
_SIZE_UNITS: dict[str, int] = {
    "": 1,
    "B": 1,
    "b": 1,
    "KB": 1_000,
    "kB": 1_000,
    "MB": 1_000_000,
    "GB": 1_000_000_000,
    "TB": 1_000_000_000_000,
    "KiB": 1 << 10,
    "MiB": 1 << 20,
    "GiB": 1 << 30,
    "TiB": 1 << 40,
}
_NUMBER_CHARS = frozenset("0123456789.+-")


def _split(text: str) -> tuple[str, str]:
    s = text.strip()
    end = 0
    while end < len(s) and s[end] in _NUMBER_CHARS:
        end += 1
    return s[:end], s[end:].strip()


def _exact(text: str, number: str, factor: int, what: str) -> int:
    if not number:
        raise ValueError(f"{text!r} has no number")
    try:
        value = Decimal(number) * factor
    except InvalidOperation:
        raise ValueError(f"{text!r} is not a number") from None
    if value < 0:
        raise ValueError(f"{text!r} is negative")
    if value != value.to_integral_value():
        raise ValueError(f"{text!r} is not a whole number of {what}")
    return int(value)


def parse_time_ps(text: str) -> int:
    """``"1.5 us"`` -> 1_500_000 (picoseconds). A unit is required."""
    number, unit = _split(text)
    if not unit:
        raise ValueError(
            f"{text!r} has no unit: write e.g. '{text.strip()} ns' (ps, ns, us, ms, s)"
        )
    factor = _TIME_UNITS.get(unit)
    if factor is None:
        raise ValueError(f"{unit!r} is not a time unit (ps, ns, us, ms, s)")
    return _exact(text, number, factor, "picoseconds")


def parse_size_bytes(text: str) -> int:
    """``"2 MiB"`` -> 2097152; a bare number is bytes."""
    number, unit = _split(text)
    factor = _SIZE_UNITS.get(unit)
    if factor is None:
        raise ValueError(f"{unit!r} is not a size unit (B, KB, MB, GB, KiB, MiB, GiB)")
    return _exact(text, number, factor, "bytes")


def format_time(ps: float) -> str:
    """Human-readable time, e.g. ``format_time(302258) == '302.258 ns'``."""
    for div, unit in ((1e12, "s"), (1e9, "ms"), (1e6, "us"), (1e3, "ns")):
        if abs(ps) >= div:
            return f"{ps / div:.3f} {unit}"
    return f"{ps:.0f} ps"
