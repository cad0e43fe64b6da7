"""The FastAPI app factory: lifespan resources, routers, the static frontend."""

from __future__ import annotations

import asyncio
import logging
from contextlib import asynccontextmanager
from pathlib import Path

import plotly
from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

from backend import __version__, session_process
from backend.config import Settings, get_settings
from backend.labs import load_all
from backend.manager import SessionManager
from backend.routes import catalog, classroom, health, lessons, runs, ws
from backend.security import SecurityHeaders
from backend.store import RunStore

log = logging.getLogger("shaomai")
ROOT = Path(__file__).resolve().parent.parent
FRONTEND = ROOT / "frontend"
# plotly.js's cartesian bundle (npm, fetched by `make` and the Dockerfile): every trace type
# the labs draw in 1.5 MB. The python package's full bundle (4.8 MB) is the fallback; its
# compile alone held a page's first frame back by 1-2 s on a busy 2-core machine.
PLOTLY_CARTESIAN = (
    ROOT / ".cache/npm/node_modules/plotly.js-cartesian-dist-min/plotly-cartesian.min.js"
)
PLOTLY_FULL = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


def plotly_bundle(cartesian: Path = PLOTLY_CARTESIAN) -> Path:
    """The plotly.js file to serve: the cartesian bundle, else the full one (with a warning)."""
    if cartesian.is_file():
        return cartesian
    log.warning(
        "%s is missing (run `make`): serving plotly's full 4.8 MB bundle, pages start slower",
        cartesian,
    )
    return PLOTLY_FULL


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    load_all()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        # A damaged store stops start-up with a clear message (docs/deploy.md).
        # SQLite under data_dir, or SHAOMAI_DATABASE_URL (PostgreSQL) when hosted.
        app.state.store = RunStore.from_settings(settings)
        app.state.sessions = SessionManager(settings, app.state.store)  # autosaves into it
        app.state.sessions.start()
        if settings.session_process:  # the fork server's ~2–3 s, before serving, off the loop
            await asyncio.to_thread(session_process.warm_up)
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
    app.include_router(lessons.router)

    plotly_js_path = plotly_bundle()

    @app.get("/vendor/plotly.min.js", include_in_schema=False)
    def plotly_js() -> FileResponse:
        # Served from this machine: no CDN, works offline in a classroom.
        return FileResponse(plotly_js_path, media_type="text/javascript")

    app.mount("/", StaticFiles(directory=FRONTEND, html=True), name="frontend")
    return app
