"""`python -m kinegraph.cli`: the `kinegraph` command."""

from kinegraph.cli.main import app

app()
