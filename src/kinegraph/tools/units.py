"""Physical units of QuantiPhy text (lengths, speeds, accelerations) and time <-> frame mapping.

Every quantity is converted to SI (m, m/s, m/s^2) before any arithmetic; the requested unit is applied
last. Time follows the benchmark's convention: t = 0 is the first frame and t_i = i / fps.
"""

from __future__ import annotations

import math
import re
from typing import Literal, NamedTuple

Dimension = Literal["length", "speed", "acceleration"]


class Unit(NamedTuple):
    """A unit: its canonical spelling, what it measures, and the factor that takes it to SI."""

    symbol: str
    dimension: Dimension
    to_si: float


_LENGTH = {"mm": 1e-3, "cm": 1e-2, "m": 1.0, "km": 1e3}
_LENGTH_WORDS = {
    "millimeter": "mm",
    "millimetre": "mm",
    "centimeter": "cm",
    "centimetre": "cm",
    "meter": "m",
    "metre": "m",
    "kilometer": "km",
    "kilometre": "km",
}
# "g" (standard gravity) is left out on purpose: in QuantiPhy text it is ambiguous with grams.
UNITS: dict[str, Unit] = {}
for _sym, _f in _LENGTH.items():
    UNITS[_sym] = Unit(_sym, "length", _f)
    UNITS[f"{_sym}/s"] = Unit(f"{_sym}/s", "speed", _f)
    UNITS[f"{_sym}/s^2"] = Unit(f"{_sym}/s^2", "acceleration", _f)
UNITS["km/h"] = Unit("km/h", "speed", 1000.0 / 3600.0)

SI_SYMBOL: dict[Dimension, str] = {"length": "m", "speed": "m/s", "acceleration": "m/s^2"}

_SPACES = re.compile(r"\s+")


def parse_unit(text: str) -> Unit:
    """Canonical unit of a spelling such as "cm", "meters", "m/s²", "m/s/s"; ValueError if unknown."""
    s = _SPACES.sub("", text.strip().lower())
    s = s.replace("²", "^2").replace("squared", "^2").replace("per", "/")
    s = re.sub(r"seconds?|secs?", "s", s)
    for word, sym in _LENGTH_WORDS.items():
        s = re.sub(rf"{word}s?", sym, s)
    s = re.sub(r"/s(?:\^?2|/s)$", "/s^2", s)
    if s not in UNITS:
        raise ValueError(f"unknown unit {text!r}; known: {', '.join(sorted(UNITS))}")
    return UNITS[s]


def to_si(value: float, unit: str | Unit) -> float:
    """`value` in `unit` expressed in SI (m, m/s, m/s^2)."""
    u = unit if isinstance(unit, Unit) else parse_unit(unit)
    return value * u.to_si


def from_si(value_si: float, unit: str | Unit) -> float:
    """An SI value expressed in `unit`."""
    u = unit if isinstance(unit, Unit) else parse_unit(unit)
    return value_si / u.to_si


def convert(value: float, from_unit: str | Unit, to_unit: str | Unit) -> float:
    """Convert between two units of the same dimension; ValueError across dimensions (e.g. m -> m/s)."""
    src = from_unit if isinstance(from_unit, Unit) else parse_unit(from_unit)
    dst = to_unit if isinstance(to_unit, Unit) else parse_unit(to_unit)
    if src.dimension != dst.dimension:
        raise ValueError(f"cannot convert {src.symbol} ({src.dimension}) to {dst.symbol} ({dst.dimension})")
    return value * src.to_si / dst.to_si


def _check_fps(fps: float) -> None:
    if not (isinstance(fps, int | float) and math.isfinite(fps) and fps > 0):
        raise ValueError(f"field 'fps': must be a positive finite number, got {fps!r}")


def time_to_frame(t_s: float, fps: float) -> int:
    """Frame index of time `t_s`: round(t * fps), t = 0 at the first frame.

    Python's round (half to even) is kept on purpose: the Blender ground truth maps times the same way.
    """
    _check_fps(fps)
    if not math.isfinite(t_s) or t_s < 0:
        raise ValueError(f"time must be a finite number >= 0 s, got {t_s!r}")
    return round(t_s * fps)


def frame_to_time(index: int, fps: float) -> float:
    """Time in seconds of frame `index` (t = index / fps)."""
    _check_fps(fps)
    if index < 0:
        raise ValueError(f"frame index must be >= 0, got {index}")
    return index / fps
