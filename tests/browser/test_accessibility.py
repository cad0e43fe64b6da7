"""axe-core finds no serious accessibility violations; everything works from the keyboard."""

from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

AXE = (
    Path(__file__).resolve().parents[2]
    / ".cache"
    / "npm"
    / "node_modules"
    / "axe-core"
    / "axe.min.js"
)
PAGES = [
    "/?lang=en",
    "/?lang=zh",
    "/lab.html?lab=linear-regression&lang=en",
    "/lab.html?lab=linear-regression&lang=zh&present=1",
    "/examples/embed.html",
]


def axe_violations(page):
    page.add_script_tag(path=str(AXE))
    result = page.evaluate(
        """async () => {
            const r = await axe.run(document, {resultTypes: ['violations']});
            return r.violations.map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.length,
                                           target: v.nodes[0].target.join(' ')}));
        }"""
    )
    return [v for v in result if v["impact"] in ("serious", "critical")]


@pytest.fixture
def axe_page(browser):
    assert AXE.exists(), "run `make test` (it installs axe-core from npm)"
    # The app's CSP forbids injected scripts: the checker bypasses it, the app does not.
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000}, bypass_csp=True)
    yield ctx.new_page()
    ctx.close()


@pytest.mark.parametrize("path", PAGES)
def test_no_serious_axe_violations(live_server, axe_page, path):
    axe_page.goto(f"{live_server}{path}")
    ready = "() => window.shaomai && window.shaomai.store.get('role')"
    if "lab.html" in path:
        axe_page.wait_for_function(ready)
    elif "embed" in path:  # the embedded labs are what the page is for: wait for them
        axe_page.wait_for_load_state("load")
        for frame in axe_page.frames[1:]:
            frame.wait_for_function(ready)
    else:
        axe_page.wait_for_load_state("networkidle")
    violations = axe_violations(axe_page)
    assert violations == [], violations


def test_keyboard_reaches_and_operates_the_controls(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=linear-regression&lang=en")
    page.wait_for_function("() => window.shaomai && window.shaomai.store.get('role') === 'driver'")
    seen = set()
    for _ in range(40):
        page.keyboard.press("Tab")
        seen.add(
            page.evaluate("() => document.activeElement.dataset.act || document.activeElement.id")
        )
    assert {"play", "step", "step10", "reset", "share_class", "fork", "lang-btn"} <= seen
    page.focus("[data-act=step]")
    page.keyboard.press("Enter")
    page.wait_for_function("() => window.shaomai.store.get('step') === 1")
    outline = page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"  # a visible focus ring
    page.wait_for_function(
        "() => document.querySelector('#announce').textContent.includes('step 1')"
    )
