"""Serve a graph as a driving-QA HTTP endpoint: `create_app(ServeSettings(...))` or `kinegraph serve`."""

from kinegraph.serve.app import create_app
from kinegraph.serve.server import BackgroundServer, serve
from kinegraph.serve.settings import ServeSettings, load_api_keys

__all__ = ["BackgroundServer", "ServeSettings", "create_app", "load_api_keys", "serve"]
