"""`kinegraph reproduce --list`: every table with numbers, its arms and how many kinegraph can run."""

from __future__ import annotations

from kinegraph.reproduce.catalog import all_tables


def listing() -> str:
    """One line per table: `paper:table  benchmark  runnable/arms  title (source)`, then its status."""
    lines = []
    for table in all_tables():
        n, k = len(table.arms), len(table.reproducible)
        status = "reproducible" if k == n else "partly reproducible" if k else "not reproducible here"
        lines.append(
            f"{table.key:<32} {table.benchmark:<10} {k:>3}/{n:<3} arms  {status:<22} "
            f"{table.title} ({table.source.table})"
        )
    return "\n".join(lines) + "\n"
