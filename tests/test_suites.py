"""The benchmark registry: every suite loads, names its metric and scorer, declares its evaluate flags with
help, and has a synthetic generator whose set its own loader reads back."""

from __future__ import annotations

import pytest

from kinegraph.registry import UnknownEntryError
from kinegraph.suites import Suite, suites, synthetic_generator

SIX = ["autodridm", "dsi", "egodyn", "quantiphy", "stsbench", "tad"]
SMALL = {"autodridm": 2, "dsi": 2, "egodyn": 1, "quantiphy": 2, "stsbench": 3, "tad": 1}


def test_the_six_benchmarks_are_registered():
    assert suites.names() == SIX


@pytest.mark.parametrize("name", SIX)
def test_every_suite_declares_what_the_cli_and_reports_need(name):
    suite = suites.get(name)
    assert isinstance(suite, Suite) and suite.name == name
    assert suite.primary and suite.notes.get("paired unit")
    assert suite.official is (name != "autodridm")
    assert suite.evaluate_files is not None and (suite.evaluate_files.__doc__ or "").strip()
    flags = suite.evaluate_flags
    assert [f.name for f in flags if f.positional] == ["predictions"]
    assert all(f.help.strip() for f in flags)
    assert len({f.name for f in flags}) == len(flags)


@pytest.mark.slow
@pytest.mark.parametrize("name", SIX)
def test_every_synthetic_set_is_read_back_by_its_own_loader(name, tmp_path):
    suite = suites.get(name)
    path = synthetic_generator(name)(tmp_path / name, n=SMALL[name], seed=1)
    samples = suite.load(path)
    assert samples and {s.benchmark for s in samples} == {name}
    assert all(s.answer is not None for s in samples)


def test_an_unknown_world_names_the_known_ones():
    with pytest.raises(UnknownEntryError) as error:
        synthetic_generator("atlantis")
    known = "autodridm, dsi, egodyn, nuscenes, quantiphy, stsbench, tad"
    assert str(error.value) == f"unknown synthetic world 'atlantis'; known: {known}"
