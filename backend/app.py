"""The FastAPI app factory: lifespan resources, routers, the static frontend."""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from pathlib import Path

import plotly
from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

from backend import __version__
from backend.config import Settings, get_settings
from backend.labs import load_all
from backend.manager import SessionManager
from backend.routes import catalog, classroom, health, runs, ws
from backend.security import SecurityHeaders
from backend.store import STORE_FILENAME, RunStore

log = logging.getLogger("shaomai")
FRONTEND = Path(__file__).resolve().parent.parent / "frontend"
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    load_all()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        # A damaged store stops start-up with a clear message (docs/deploy.md).
        app.state.store = RunStore(
            settings.data_dir / STORE_FILENAME, int(settings.max_run_mb * 2**20)
        )
        app.state.sessions = SessionManager(settings)
        app.state.sessions.start()
        yield
        await app.state.sessions.stop()
        app.state.store.close()

    app = FastAPI(title="Shaomai Lab", version=__version__, lifespan=lifespan)
    app.state.settings = settings
    app.add_middleware(SecurityHeaders, settings=settings)
    app.include_router(health.router)
    app.include_router(catalog.router)
    app.include_router(ws.router)
    app.include_router(classroom.router)
    app.include_router(runs.router)

    @app.get("/vendor/plotly.min.js", include_in_schema=False)
    def plotly_js() -> FileResponse:
        # Served from the installed plotly package: no CDN, works offline in a classroom.
        return FileResponse(PLOTLY_JS, media_type="text/javascript")

    app.mount("/", StaticFiles(directory=FRONTEND, html=True), name="frontend")
    return app
