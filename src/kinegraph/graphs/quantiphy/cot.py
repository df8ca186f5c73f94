"""QuantiPhy's structured CoT sub-questions, built from the paper's templates when the data has none.

Paper Sec 5.3: (I) "What is [the ground-truth object's property] in pixels?", (II) "What is the
proportional relationship between pixels and [a kinematic scale]?", (III) "What is [the inference
target's property] in pixels?", then the question itself. The wording follows the starter kit's
`cot_q1..3` (`CIB_Ready - test4.csv`): "What is the speed of the bird in pixel/s?", "What is the
proportional relationship between pixel and meter?", "What is the length of the bird by pixels?".
The released validation CSV has no `cot_q*` columns, so without this the CoT graph would ask nothing.
"""

from __future__ import annotations

import re

from kinegraph.tools.quantiphy_text import parse_prior, parse_question
from kinegraph.tools.units import parse_unit

COT_COLUMNS = ("cot_q1", "cot_q2", "cot_q3")
PIXEL_UNITS = {"size": "pixels", "speed": "pixel/s", "acceleration": "pixel/s^2"}
LENGTH_WORDS = {"m": "meter", "cm": "centimeter", "mm": "millimeter", "km": "kilometer"}
_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)"


def _prior_phrase(prior_text: str) -> str:
    """The prior's quantity and object ("speed of the bird"), a leading `t=1.5,` moved to the end."""
    text = prior_text.strip()
    phrase = text[: max(text.rfind("="), text.rfind("~"))].strip()
    lead = re.match(rf"t\s*=\s*({_NUM})\s*s?\s*,\s*", phrase)
    if lead:
        phrase = f"{phrase[lead.end() :]} at t={lead.group(1)}s"
    return re.sub(r"^the\s+", "", phrase, flags=re.IGNORECASE)


def _question_body(question: str) -> str:
    """The question without its trailing "in <unit>?" (only when that really is a unit)."""
    text = question.strip().rstrip(" ?？.")
    ins = list(re.finditer(r"\bin\s+", text))
    if ins:
        try:
            parse_unit(text[ins[-1].end() :])
        except ValueError:
            return text
        return text[: ins[-1].start()].rstrip(" ,")
    return text


def template_sub_questions(prior_text: str, question: str) -> tuple[str, str, str]:
    """(I) the prior in pixels, (II) pixel <-> world-length scale, (III) the target in pixels.

    Raises DataError (naming `ground_truth_prior` or `question`) when either text cannot be read.
    """
    prior = parse_prior(prior_text)
    target = parse_question(question)
    length = LENGTH_WORDS.get(prior.unit.symbol.split("/")[0], prior.unit.symbol.split("/")[0])
    target_kind = target.kind if target.kind in ("speed", "acceleration") else "size"
    body = _question_body(question)
    q3 = f"{body} by pixels?" if target_kind == "size" else f"{body} in {PIXEL_UNITS[target_kind]}?"
    return (
        f"What is the {_prior_phrase(prior_text)} in {PIXEL_UNITS[prior.kind]}?",
        f"What is the proportional relationship between pixel and {length}?",
        q3,
    )
