"""Catalog thumbnails from a real frame of every lab: `python -m tools.thumbnails [lab ...]`.

A generator run by hand (its output, frontend/thumbs/<lab>.webp, is committed): it starts the
server, opens each lab in Chromium, trains it a little (play for a few seconds where the lab
plays), and screenshots the top of the lab's view. The browser itself scales the picture to
320x200 and encodes it as WebP (a canvas), so no image library is needed.
"""

from __future__ import annotations

import argparse
import base64
import json
import logging
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

from bench.browser import ARGS, CHROMIUM  # the tests' binary and flags

log = logging.getLogger("shaomai.thumbnails")
ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "frontend" / "thumbs"
W, H = 320, 200

# The screenshot's bytes, scaled into a W x H canvas (covering it, from the top) and
# encoded as WebP by the browser.
SHRINK = """async ([png, w, h]) => {
  const img = new Image();
  img.src = 'data:image/png;base64,' + png;
  await img.decode();
  const c = document.createElement('canvas');
  c.width = w; c.height = h;
  const s = Math.max(w / img.width, h / img.height);
  const g = c.getContext('2d');
  g.fillStyle = '#fff'; g.fillRect(0, 0, w, h);
  g.imageSmoothingQuality = 'high';
  g.drawImage(img, (w - img.width * s) / 2, 0, img.width * s, img.height * s);
  return c.toDataURL('image/webp', 0.82).split(',')[1];
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(port: int) -> subprocess.Popen:
    # Its own data folder: the sessions' autosaves go away with it.
    env = {
        **os.environ,
        "SHAOMAI_DATA_DIR": tempfile.mkdtemp(prefix="shaomai-thumbs-"),
        "SHAOMAI_MAX_SESSIONS_PER_IP": "1000",
        "SHAOMAI_SESSIONS_PER_IP_PER_MIN": "10000",
        "SHAOMAI_MAX_SESSIONS": "1000",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "backend", "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT,
        env=env,
    )
    for _ in range(300):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/labs", timeout=2)
            return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("the server did not start")


def _plays(lab: dict) -> bool:
    c = lab.get("plays", True)
    return c is not False  # a condition on the params: the default params may still play


def shoot(page, base: str, lab: dict, seconds: float) -> bytes:
    page.goto(f"{base}/lab.html?lab={lab['id']}&lang=en")
    page.wait_for_function(
        "() => window.shaomai && window.shaomai.store.get('role') === 'driver'", timeout=120_000
    )
    if lab.get("trains") and _plays(lab):
        page.evaluate("() => window.shaomai.client.control('play')")
        page.wait_for_timeout(int(seconds * 1000))
        page.evaluate("() => window.shaomai.client.control('pause')")
    page.wait_for_timeout(1500)  # the last frame drawn, plotly's charts laid out
    view = page.locator("#view")
    box = view.bounding_box()
    height = min(box["height"], box["width"] * H / W)
    png = page.screenshot(
        clip={"x": box["x"], "y": box["y"], "width": box["width"], "height": max(height, 50)}
    )
    return base64.b64decode(page.evaluate(SHRINK, [base64.b64encode(png).decode(), W, H]))


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("labs", nargs="*", help="lab ids (default: every lab in the catalog)")
    ap.add_argument(
        "--seconds", type=float, default=4.0, help="how long each lab plays before its picture"
    )
    a = ap.parse_args()
    port = _free_port()
    proc = _serve(port)
    base = f"http://127.0.0.1:{port}"
    try:
        labs = json.load(urllib.request.urlopen(f"{base}/api/labs"))
        if a.labs:
            labs = [lab for lab in labs if lab["id"] in a.labs]
        OUT.mkdir(parents=True, exist_ok=True)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            ctx = browser.new_context(viewport={"width": 1280, "height": 900})
            for lab in labs:
                page = ctx.new_page()
                try:
                    data = shoot(page, base, lab, a.seconds)
                    (OUT / f"{lab['id']}.webp").write_bytes(data)
                    log.info("%s: %d bytes", lab["id"], len(data))
                except Exception as exc:  # one lab's failure leaves the others' pictures
                    log.warning("%s: no thumbnail (%s)", lab["id"], exc)
                finally:
                    page.close()
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


if __name__ == "__main__":
    main()
