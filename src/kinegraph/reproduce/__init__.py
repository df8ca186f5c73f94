"""Reproduce the five papers' tables: their published numbers as data, each table's arms as one sweep."""

from kinegraph.reproduce.catalog import Arm, PaperTable, all_tables, find_table, papers
from kinegraph.reproduce.listing import listing
from kinegraph.reproduce.runner import Request, reproduce

__all__ = ["Arm", "PaperTable", "Request", "all_tables", "find_table", "listing", "papers", "reproduce"]
