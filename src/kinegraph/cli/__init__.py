"""The `kinegraph` command line (`kinegraph.cli:app`); one module per command group."""

from kinegraph.cli.main import app

__all__ = ["app"]
