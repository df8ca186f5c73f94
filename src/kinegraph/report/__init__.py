"""Compare runs: tables, paired bootstrap confidence intervals, plots, HTML and markdown."""

from kinegraph.report.bootstrap import Delta, paired_bootstrap, paired_bootstrap_items
from kinegraph.report.compare import Comparison, compare
from kinegraph.report.html import REPORT_SUFFIXES, write_report
from kinegraph.report.tables import markdown, print_table

__all__ = [
    "REPORT_SUFFIXES",
    "Comparison",
    "Delta",
    "compare",
    "markdown",
    "paired_bootstrap",
    "paired_bootstrap_items",
    "print_table",
    "write_report",
]
