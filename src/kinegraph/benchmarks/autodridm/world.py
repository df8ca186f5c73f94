"""Synthetic AutoDriDM: drawn front-camera scenes whose answers follow from what is drawn.

Each scene has a time of day, maybe rain, a traffic light (green, yellow, red or none), cars, maybe a
pedestrian on the road and maybe construction cones. The six task files ask the paper's template
questions about it (Object-1/2, Scene-1/2 multi-select, Decision-1/2), with answers from fixed rules
(key object: pedestrian > red light > cars > traffic light > building; slow down for a pedestrian or a
red light), in the official JSON layout (`image_name`, `taskX_q/_o/_a`, and `danger_score`, alternately
an int and a string).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from kinegraph.benchmarks.autodridm.loader import TASKS
from kinegraph.media import write_image

WIDTH_PX, HEIGHT_PX = 192, 108
LIGHT_STATES = ("green", "yellow", "red", "none")
_LIGHT_RGB = {"green": (40, 220, 60), "yellow": (240, 200, 30), "red": (235, 30, 30)}

QUESTIONS = {
    "Object-1": (
        "When driving a car, what is the most important object in the image that influences your driving "
        "decision? Please select only one option.",
        "A.Building; B.Vehicle; C.Traffic light; D.Pedestrian; E.Street lamp",
    ),
    "Object-2": (
        "What is the state of the traffic light? Please select only one option.",
        "A.Green; B.Yellow; C.Red; D.There is no traffic light",
    ),
    "Scene-1": (
        "What is the weather condition in the image? Please select one or more options.",
        "A.Daytime; B.Nighttime; C.Rain; D.Snow; E.Heavy fog",
    ),
    "Scene-2": (
        "What special scenes in the image could potentially affect the decision-making of the host vehicle? "
        "Please select one or more options.",
        "A.Heavy Traffic; B.Accident Scene; C.Construction Zone; D.Vehicle breakdown; E.School road section; "
        "F.Rain or Snow Weather; G.None of the above",
    ),
    "Decision-1": (
        "When driving a car, which decision do you think is the best choice in the current situation? "
        "Please select only one option.",
        "A.Drive straight; B.Slow down/make an emergency stop; C.Turn left; D.Turn right; E.Change lanes; "
        "F.Stay still",
    ),
    "Decision-2": (
        "If you speed up, what level of risk will be faced? Please select only one option.",
        "A.Absolutely safe; B.Moderate risk; C.Extreme risk",
    ),
}


@dataclass(frozen=True)
class Scene:
    """What one synthetic image shows."""

    night: bool
    rain: bool
    light: str
    n_cars: int
    pedestrian: bool
    cones: bool

    def answers(self) -> dict[str, str]:
        """Task -> answer letters (comma-separated for the multi-select tasks)."""
        red = self.light == "red"
        lit = self.light != "none"
        key_object = "D" if self.pedestrian else "C" if red else "B" if self.n_cars else "C" if lit else "A"
        special = [c for c, on in (("A", self.n_cars >= 3), ("C", self.cones), ("F", self.rain)) if on] or [
            "G"
        ]
        return {
            "Object-1": key_object,
            "Object-2": {"green": "A", "yellow": "B", "red": "C", "none": "D"}[self.light],
            "Scene-1": ",".join(["B" if self.night else "A"] + (["C"] if self.rain else [])),
            "Scene-2": ",".join(special),
            "Decision-1": "B" if (self.pedestrian or red) else "A",
            "Decision-2": "C" if self.pedestrian else "B" if (red or self.rain or self.cones) else "A",
        }

    def danger(self) -> int:
        """1 (minimal) to 5 (severe), from the most dangerous element."""
        if self.pedestrian:
            return 5
        if self.light == "red":
            return 4
        return 3 if (self.rain or self.cones) else 1 + min(self.n_cars, 1)


def random_scene(rng: np.random.Generator) -> Scene:
    return Scene(
        night=bool(rng.random() < 0.3),
        rain=bool(rng.random() < 0.3),
        light=str(rng.choice(LIGHT_STATES)),
        n_cars=int(rng.integers(0, 4)),
        pedestrian=bool(rng.random() < 0.25),
        cones=bool(rng.random() < 0.2),
    )


def render(scene: Scene, rng: np.random.Generator) -> np.ndarray:
    """(H, W, 3) RGB uint8 drawing of the scene."""
    sky = (20, 24, 50) if scene.night else (130, 180, 235)
    image = np.zeros((HEIGHT_PX, WIDTH_PX, 3), np.uint8)
    image[: HEIGHT_PX // 2] = sky
    image[HEIGHT_PX // 2 :] = (40, 40, 40) if scene.night else (95, 95, 95)
    horizon = HEIGHT_PX // 2
    road = np.array([[WIDTH_PX // 2 - 8, horizon], [WIDTH_PX // 2 + 8, horizon], [WIDTH_PX - 10, HEIGHT_PX],
                     [10, HEIGHT_PX]], np.int32)  # fmt: skip
    cv2.fillPoly(image, [road], (60, 60, 60) if scene.night else (120, 120, 120))
    cv2.rectangle(image, (4, 20), (34, horizon), (150, 120, 100), -1)  # a building
    for i in range(scene.n_cars):
        x = int(30 + 45 * i + rng.integers(0, 10))
        cv2.rectangle(image, (x, horizon + 8), (x + 22, horizon + 20), (40, 70, 170), -1)
    if scene.light != "none":
        cv2.rectangle(image, (150, 10), (162, 40), (20, 20, 20), -1)
        slot = {"red": 0, "yellow": 1, "green": 2}[scene.light]
        cv2.circle(image, (156, 15 + 10 * slot), 4, _LIGHT_RGB[scene.light], -1)
    if scene.pedestrian:
        cv2.rectangle(image, (96, horizon + 14), (101, horizon + 34), (250, 220, 180), -1)
    if scene.cones:
        for x in (60, 75, 90):
            cv2.fillPoly(image, [np.array([[x, 100], [x + 4, 88], [x + 8, 100]], np.int32)], (255, 130, 0))
    if scene.rain:
        for _ in range(60):
            x, y = int(rng.integers(0, WIDTH_PX)), int(rng.integers(0, HEIGHT_PX - 6))
            cv2.line(image, (x, y), (x + 2, y + 6), (200, 200, 230), 1)
    return image


def generate(out_dir: Path, n: int = 20, seed: int = 0) -> Path:
    """Write `n` scenes as images plus the six task files; returns `out_dir`."""
    out_dir = Path(out_dir)
    rng = np.random.default_rng(seed)
    records: dict[str, list[dict]] = {t: [] for t in TASKS}
    truth = []
    for i in range(n):
        scene = random_scene(rng)
        image_name = f"images/synthetic/{i:04d}.png"
        write_image(out_dir / image_name, render(scene, rng))
        danger = scene.danger()
        answers = scene.answers()
        for number, task in enumerate(TASKS, start=1):
            question, options = QUESTIONS[task]
            records[task].append(
                {
                    "image_name": image_name,
                    f"task{number}_q": question,
                    f"task{number}_o": options,
                    f"task{number}_a": answers[task],
                    "danger_score": danger if i % 2 == 0 else str(danger),  # both encodings occur upstream
                }
            )
        truth.append({"image_name": image_name, **scene.__dict__})
    for task, task_records in records.items():
        (out_dir / f"{task}.json").write_text(json.dumps(task_records, indent=1))
    (out_dir / "synthetic_truth.jsonl").write_text("".join(json.dumps(t) + "\n" for t in truth))
    return out_dir
