"""A builder's defaults read from its source agree with its signature, for every shipped graph whose
label depends on them, and a report labels a run without importing the builder's module."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import kinegraph
from kinegraph.graphs import graphs
from kinegraph.graphs.source_defaults import literal_defaults

OFFICIAL = [name for name in graphs.names() if graphs.get(name).official_options]


@pytest.mark.parametrize("name", OFFICIAL)
def test_source_defaults_match_the_signature(name):
    spec = graphs.get(name)
    keys = [k for k, _ in spec.official_options]
    code = (
        "from kinegraph.graphs.source_defaults import literal_defaults as d; "
        f"print(repr({{k: v for k, v in d({spec.target!r}).items() if k in {keys!r}}}))"
    )
    root = str(Path(kinegraph.__file__).resolve().parents[1])
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": root}
    )
    assert done.returncode == 0, done.stderr
    from_signature = {o.name: o.default for o in spec.options if o.name in keys}
    assert eval(done.stdout) == from_signature and from_signature


def test_an_imported_module_is_read_from_its_signature():
    assert literal_defaults("kinegraph.graphs.spec:builder_options") is None


def test_a_missing_function_or_module_gives_none():
    assert literal_defaults("kinegraph.graphs.source_defaults:no_such_function") is None
    assert literal_defaults("kinegraph.no_such_module:build") is None


def test_keyword_only_and_positional_defaults_are_read(tmp_path, monkeypatch):
    (tmp_path / "kg_probe_builder.py").write_text(
        "X = object()\ndef build(a, b=1.5, *, c='up', d=X, e=None):\n    pass\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert literal_defaults("kg_probe_builder:build") == {"b": 1.5, "c": "up", "e": None}


def test_a_constant_of_an_imported_module_is_followed(tmp_path, monkeypatch):
    (tmp_path / "kg_probe_consts.py").write_text("LIMIT_MPS = 0.25\n", encoding="utf-8")
    (tmp_path / "kg_probe_follow.py").write_text(
        "import kg_probe_consts as consts\nLOCAL = 'a'\n"
        "def build(speed=consts.LIMIT_MPS, mode=LOCAL, other=consts.MISSING):\n    pass\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert literal_defaults("kg_probe_follow:build") == {"speed": 0.25, "mode": "a"}
