"""Getting the real benchmarks: fetch them from the Hugging Face Hub, check a folder before a run."""

from kinegraph.benchmarks.card import HubLayout
from kinegraph.data.check import Finding, check, preflight
from kinegraph.data.fetch import FetchRecord, fetch
from kinegraph.data.hub_layouts import LAYOUTS

__all__ = ["LAYOUTS", "FetchRecord", "Finding", "HubLayout", "check", "fetch", "preflight"]
