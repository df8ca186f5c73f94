"""`/docs` without a network: the page loads only Swagger UI 5's files as the `swagger-ui-py` package
installs them (Apache-2.0), served by this app."""

from __future__ import annotations

from importlib.resources import files

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

#: Where the page's scripts, styles and icon are served from.
ASSETS = "/docs/assets"


def add_offline_docs(app: FastAPI) -> None:
    """Serve Swagger UI at `/docs` from the installed files (the app is built with docs_url=None)."""
    folder = files("swagger_ui") / "static"
    app.mount(ASSETS, StaticFiles(directory=str(folder)), name="docs-assets")
    openapi_url = app.openapi_url or "/openapi.json"

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi_url,
            title=f"{app.title} - docs",
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS}/favicon-32x32.png",
            oauth2_redirect_url="/docs/oauth2-redirect",
            swagger_ui_parameters={"validatorUrl": None},  # the badge would ask validator.swagger.io
        )

    @app.get("/docs/oauth2-redirect", include_in_schema=False)
    async def oauth2_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()
