"""Parse QuantiPhy's text fields: the physical prior, the question, and the multi-line depth_info.

Formats are those of the official validation CSV (spec quantiphy.md §1.6): `=` or `~` separators, units
written many ways or missing, prior times as `t=1.5, ...` or `... at 0.6s`, typos in quantity words.
Fallbacks are documented and flagged (`unit_inferred`): a missing unit means the SI unit of the quantity.
"""

from __future__ import annotations

import math
import re
from typing import Literal, NamedTuple

from kinegraph.errors import DataError
from kinegraph.tools.units import SI_SYMBOL, Dimension, Unit, parse_unit, to_si

PriorKind = Literal["size", "speed", "acceleration"]
QuestionKind = Literal["size", "speed", "acceleration", "distance", "displacement", "path_length"]

_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_TIME = rf"({_NUM})\s*(?:s|sec|seconds?)\b"

# (pattern, kind, aspect). The earliest match in the text wins, so "wingspan (the distance from ...)" is
# a size and "total distance traveled" a path length. Typos seen in the data ("velolicty",
# "diasplacement") are covered by the loose stems.
_QUESTION_KEYWORDS: tuple[tuple[str, QuestionKind, str], ...] = (
    (r"total distance|distance travel+ed", "path_length", ""),
    (r"d\w{0,3}placement", "displacement", ""),
    (r"distance", "distance", ""),
    (r"accel\w*", "acceleration", ""),
    (r"velo\w*|speed", "speed", ""),
    (r"diameter", "size", "diameter"),
    (r"length", "size", "length"),
    (r"width|breadth|wingspan", "size", "width"),
    (r"height", "size", "height"),
    (r"thickness", "size", "thickness"),
    (r"calib(?:re|er)|size", "size", "size"),
)
_PRIOR_KEYWORDS: tuple[tuple[str, PriorKind, str], ...] = (
    (r"accel\w*|acc\b", "acceleration", ""),
    (r"velo\w*|speed", "speed", ""),
) + tuple((p, "size", a) for p, k, a in _QUESTION_KEYWORDS if k == "size")

_DIMENSION: dict[str, Dimension] = {
    "size": "length",
    "distance": "length",
    "displacement": "length",
    "path_length": "length",
    "speed": "speed",
    "acceleration": "acceleration",
}


class Prior(NamedTuple):
    """One physical prior: value and unit as written, the SI value, the prior time and its object."""

    kind: PriorKind
    aspect: str  # for sizes: diameter/length/width/height/thickness/size; "" otherwise
    value: float
    unit: Unit
    value_si: float
    t_s: float | None
    object: str
    unit_inferred: bool


class Question(NamedTuple):
    """What a question asks: quantity, object(s), time or interval, and the unit of the answer."""

    kind: QuestionKind
    aspect: str
    objects: tuple[str, ...]
    t_s: float | None
    interval_s: tuple[float, float] | None
    average: bool
    moment: Literal["", "initial", "final"]
    horizontal: bool
    unit: Unit
    unit_inferred: bool


class DepthEntry(NamedTuple):
    """One depth_info line: camera-object distance in metres at time t (None for static objects)."""

    t_s: float | None
    entity: str
    distance_m: float


def _first_keyword(text: str, table: tuple[tuple[str, str, str], ...]) -> tuple[str, str, re.Match] | None:
    best: tuple[str, str, re.Match] | None = None
    for pattern, kind, aspect in table:
        for m in re.finditer(rf"\b(?:{pattern})", text):
            if best is None or (m.start(), -len(m.group(0))) < (best[2].start(), -len(best[2].group(0))):
                best = (kind, aspect, m)
            break
    return best


def _clean_object(phrase: str) -> str:
    phrase = re.sub(r"\([^)]*\)", " ", phrase)
    phrase = re.sub(r"'s\b|’s\b", "", phrase)
    phrase = re.sub(rf"\b(?:at(?: time)?|when t\s*=)\s*{_NUM}\s*s\b.*$", "", phrase)
    phrase = re.sub(r"^(?:what is|the|of|by)\s+|\s+(?:of|the|in|at|on|by)$", "", phrase.strip())
    phrase = re.sub(r"^(?:the|of)\s+", "", phrase.strip())
    return re.sub(r"\s+", " ", phrase).strip(" ,.?")


def parse_prior(text: str) -> Prior:
    """Parse a `ground_truth_prior` string such as "t=1.5, ball acceleration = 3.0 m/s^2"."""
    if not isinstance(text, str) or not text.strip():
        raise DataError(f"empty prior {text!r}", field="ground_truth_prior")
    raw = text.strip()
    sep = max(raw.rfind("="), raw.rfind("~"))
    if sep < 0:
        raise DataError(f"no '=' or '~' before the value in {raw!r}", field="ground_truth_prior")
    phrase, rest = raw[:sep].strip().lower(), raw[sep + 1 :].strip()
    m = re.fullmatch(rf"({_NUM})\s*(.*?)\s*\.?", rest)
    if not m:
        raise DataError(f"no number after the separator in {raw!r}", field="ground_truth_prior")
    value = float(m.group(1))
    if not (math.isfinite(value) and value > 0):
        raise DataError(f"prior value must be positive, got {value} in {raw!r}", field="ground_truth_prior")
    unit: Unit | None = None
    if m.group(2):
        try:
            unit = parse_unit(m.group(2))
        except ValueError as exc:
            raise DataError(f"{exc} in {raw!r}", field="ground_truth_prior") from exc
    t_s = None
    lead = re.match(rf"t\s*=\s*({_NUM})\s*s?\s*,\s*", phrase)
    if lead:
        t_s, phrase = float(lead.group(1)), phrase[lead.end() :]
    at = re.search(rf"\bat(?: time)?\s+{_TIME}", phrase)
    if at:
        t_s, phrase = float(at.group(1)), (phrase[: at.start()] + phrase[at.end() :])
    found = _first_keyword(phrase, _PRIOR_KEYWORDS)
    if found is None and unit is None:
        raise DataError(f"neither a quantity word nor a unit in {raw!r}", field="ground_truth_prior")
    if found is None:
        kind: PriorKind = "size" if unit.dimension == "length" else unit.dimension  # type: ignore[union-attr,assignment]
        aspect, obj = ("size" if kind == "size" else ""), _clean_object(phrase)
    else:
        kind, aspect, km = found[0], found[1], found[2]  # type: ignore[assignment]
        obj = _clean_object(phrase[: km.start()] + " " + phrase[km.end() :])
    dimension = _DIMENSION[kind]
    inferred = unit is None
    if unit is None:
        unit = parse_unit(SI_SYMBOL[dimension])
    elif unit.dimension != dimension:
        raise DataError(
            f"the quantity is a {dimension} but the unit {unit.symbol!r} is a {unit.dimension} in {raw!r}",
            field="ground_truth_prior",
        )
    return Prior(kind, aspect, value, unit, to_si(value, unit), t_s, obj or "object", inferred)


def _split_unit(text: str) -> tuple[str, Unit | None]:
    """(question without its trailing "in <unit>?", the unit); only the last "in ..." is tried."""
    text = text.rstrip(" ?.")
    ins = list(re.finditer(r"\bin\s+", text))
    if ins:
        try:
            return text[: ins[-1].start()].rstrip(" ,"), parse_unit(text[ins[-1].end() :])
        except ValueError:
            pass
    return text, None


def _question_objects(text: str, kind: str, km: re.Match) -> tuple[str, ...]:
    before, after = text[: km.start()], text[km.end() :]
    tail = re.split(rf"\s+at\s+(?:time\s+)?{_NUM}|\s+(?:between|in|from)\s+{_NUM}|,", after)[0]
    tail = re.sub(r"\([^)]*\)", " ", tail)
    pair = re.search(r"\b(?:between|from)\s+(.+?)\s+(?:and|to)\s+(.+)$", tail)
    if kind == "distance" and pair:
        return (_clean_object(pair.group(1)), _clean_object(pair.group(2)))
    poss = re.search(r"(?:what is\s+)?(?:the\s+)?([\w\s-]+?)(?:'s|’s)\s+(?:\(?\w+\)?\s+)*$", before)
    if poss:
        return (_clean_object(poss.group(1)),)
    between = re.match(r"\s*\(?\w*\)?\s*(?:between|of|by|from)\s+(.+)$", tail)
    return (_clean_object(between.group(1)) if between else _clean_object(tail),)


def parse_question(text: str) -> Question:
    """Parse a question: quantity kind, target object(s), time or interval, and the requested unit."""
    if not isinstance(text, str) or not text.strip():
        raise DataError(f"empty question {text!r}", field="question")
    q = re.sub(r"\s+", " ", text.replace("？", "?").strip().lower())
    body, unit = _split_unit(q)
    found = _first_keyword(body, _QUESTION_KEYWORDS)
    if found is None:
        if unit is None:
            raise DataError(f"neither a quantity word nor a unit in {text!r}", field="question")
        kind: QuestionKind = "size" if unit.dimension == "length" else unit.dimension  # type: ignore[assignment]
        aspect, objects = ("size" if kind == "size" else ""), ()
    else:
        kind, aspect = found[0], found[1]  # type: ignore[assignment]
        objects = _question_objects(body, kind, found[2])
    dimension = _DIMENSION[kind]
    inferred = unit is None
    if unit is None:
        unit = parse_unit(SI_SYMBOL[dimension])
    elif unit.dimension != dimension:
        raise DataError(
            f"asks for a {dimension} ({kind}) in {unit.symbol!r}, a {unit.dimension}: {text!r}",
            field="question",
        )
    interval = re.search(rf"(?:between|from|in)\s+{_TIME}\s+(?:and|to)\s+{_TIME}", q)
    instant = re.search(rf"(?:\bat(?: time)?|\bt\s*=)\s*{_TIME}", q)
    moment = "initial" if re.search(r"\binitial\b", q) else "final" if re.search(r"\bfinal\b", q) else ""
    return Question(
        kind=kind,
        aspect=aspect,
        objects=objects,
        t_s=float(instant.group(1)) if instant and not interval else None,
        interval_s=(float(interval.group(1)), float(interval.group(2))) if interval else None,
        average=bool(re.search(r"\baverage\b|\bmean\b", q)),
        moment=moment,  # type: ignore[arg-type]
        horizontal=bool(re.search(r"\bhorizontal\b", q)),
        unit=unit,
        unit_inferred=inferred,
    )


def _entity(name: str) -> str:
    name = re.sub(r"^distance_", "", name.strip().lower())
    name = re.sub(r"(?:_and|_to)?_camera$", "", name)
    return re.sub(r"[\s_]+", " ", name).strip()


def parse_depth_info(text: str | None) -> list[DepthEntry]:
    """Parse the multi-line depth_info field (lines or `;`-separated); empty or NaN gives []."""
    if text is None or (isinstance(text, float) and math.isnan(text)) or not str(text).strip():
        return []
    entries = []
    for line in re.split(r"[\n;]+", str(text)):
        line = line.strip()
        if not line:
            continue
        m = re.fullmatch(
            rf"(?:t\s*=\s*({_NUM})\s*s?\s*,\s*)?([^=]+?)\s*=\s*({_NUM})\s*([a-z]*)\.?", line, re.IGNORECASE
        )
        if not m:
            raise DataError(f"cannot read depth entry {line!r}", field="depth_info")
        try:
            distance_m = to_si(float(m.group(3)), m.group(4) or "m")
        except ValueError as exc:
            raise DataError(f"{exc} in depth entry {line!r}", field="depth_info") from exc
        if not distance_m > 0:
            raise DataError(f"distance must be positive in {line!r}", field="depth_info")
        t_s = float(m.group(1)) if m.group(1) is not None else None
        entries.append(DepthEntry(t_s, _entity(m.group(2)), distance_m))
    return entries
