"""The walkthrough's small defects in charts, tables, links and embeds (each failed before its
fix): tables that fit or show their scroll, log axes labelled only at readable ticks, depth's
waterfall, pastes cut with a notice, zh legends, empty charts' axes, the URL's step, embed's
`controls=`, back/forward without console errors, kv-cache's bytes in KiB; en and zh, desktop
and phone."""

import re

import pytest

from tests.conftest import (
    CHROMIUM,
    CHROMIUM_ARGS,
    free_port,
    screenshot,
    start_server,
    stop_server,
)

pytestmark = pytest.mark.browser

READY = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"
DESKTOP = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}
SIZES = pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
LANGS = pytest.mark.parametrize("lang", ["en", "zh"])


@pytest.fixture
def open_page(browser):
    """open_page(url, size) -> a page of that size that fails the test on a console error."""
    contexts = []
    errors: list[str] = []

    def open_(url: str, size=DESKTOP, phone: bool | None = None):
        phone = size is PHONE if phone is None else phone
        ctx = browser.new_context(
            viewport=size, device_scale_factor=1, is_mobile=phone, has_touch=phone
        )
        contexts.append(ctx)
        pg = ctx.new_page()
        pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        pg.on("pageerror", lambda e: errors.append(f"uncaught: {e}"))
        pg.goto(url)
        pg.wait_for_function(READY)
        return pg

    yield open_
    for ctx in contexts:
        ctx.close()
    assert not errors, f"browser console errors: {errors}"


def play_to(pg, step: int) -> None:
    """Train to `step` (a step count), then wait for the page to show it."""
    pg.evaluate(f"() => window.shaomai.client.control('step', {{count: {step}}})")
    pg.wait_for_function(f"() => window.shaomai.store.get('step') >= {step}")


# -- m18: back/forward between labs logs nothing ---------------------------------------------


@LANGS
def test_back_and_forward_between_labs_log_no_console_error(browser, lang):
    """Both labs wait in the back/forward cache while the server restarts: coming back, each
    page finds its session lost and asks for its saved state (none: 204, not a logged 404)."""
    port = free_port()
    proc, base, _ = start_server(port=port, log_name=f"walkthrough-bfcache-{lang}.log")
    # Playwright turns the back/forward cache off by default; a learner's Chromium has it on.
    # A second Chromium from the suite's own Playwright (a second sync_playwright() in the
    # same thread is refused while the session's browser runs).
    b = None
    errors: list[str] = []
    asked: list[int] = []
    try:
        b = browser.browser_type.launch(
            executable_path=CHROMIUM,
            args=CHROMIUM_ARGS,
            ignore_default_args=["--disable-back-forward-cache"],
        )
        pg = b.new_page(viewport=DESKTOP)
        pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        pg.on("pageerror", lambda e: errors.append(f"uncaught: {e}"))
        pg.on("response", lambda r: asked.append(r.status) if "/api/runs/latest" in r.url else None)
        for lab in ("rnn", "memory"):
            pg.goto(f"{base}/lab.html?lab={lab}&lang={lang}")
            pg.wait_for_function(READY)
            play_to(pg, 3)
        pg.goto("about:blank")  # both labs now wait in the cache, their sockets closed
        stop_server(proc)
        proc, _, _ = start_server(port=port, log_name=f"walkthrough-bfcache-{lang}-2.log")
        for move, lab in (
            (pg.go_back, "memory"),
            (pg.go_back, "rnn"),
            (pg.go_forward, "memory"),
        ):
            move(wait_until="commit")
            pg.wait_for_function(f"() => location.search.includes('lab={lab}')")
            pg.wait_for_function(READY)
            pg.wait_for_timeout(1000)  # a page restored late logs here, if at all
    finally:
        if b is not None:
            b.close()
        stop_server(proc)
    assert set(asked) <= {204}, asked  # a lost session's saved state: none, not a 404
    assert not errors, errors


# -- m16: the URL's step follows the run ------------------------------------------------------

URL_STEP = "() => Number(new URLSearchParams(location.search).get('step') || 0)"


@pytest.mark.parametrize("lab", ["memory", "seq2seq"])
def test_the_urls_step_follows_the_run_while_playing_and_at_its_pause(open_page, live_server, lab):
    pg = open_page(f"{live_server}/lab.html?lab={lab}&lang=en")
    pg.click("#controls [data-act=play]")
    pg.wait_for_function("() => window.shaomai.store.get('step') >= 25")
    # While playing, the link moves with it (it stayed at the first second's step before).
    pg.wait_for_function(f"() => ({URL_STEP})() >= 20")
    pg.click("#controls [data-act=play]")
    pg.wait_for_function("() => window.shaomai.store.get('state') === 'paused'")
    # The last write is the paused step (throttled writes end with the final one).
    pg.wait_for_function(f"() => ({URL_STEP})() === window.shaomai.store.get('step')")
    shown = pg.evaluate("() => window.shaomai.store.get('step')")
    pg.wait_for_timeout(1500)  # no later write takes it elsewhere
    assert pg.evaluate(URL_STEP) == shown == pg.evaluate("() => window.shaomai.store.get('step')")


# -- m17: embed honours controls= for every control -------------------------------------------

# What a reader could press, by name (the names controls= takes), and whether it shows.
SHOWN_CONTROLS = """() => {
  const seen = (e) => !!e && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';
  const out = {};
  for (const b of document.querySelectorAll('#controls [data-act]')) out[b.dataset.act] = seen(b);
  out.keep = [...document.querySelectorAll('.dash-keep')].some(seen);
  out.try = [...document.querySelectorAll('.try-next button, .try-bar button')].some(seen);
  out.class = [...document.querySelectorAll('#class-tools button')].some(seen);
  return out;
}"""


@LANGS
@SIZES
@pytest.mark.parametrize(
    "controls", ["play,step", "play,step,step10,speed,keep,try"], ids=["few", "more"]
)
def test_embed_shows_only_the_controls_it_names(open_page, live_server, lang, size, controls):
    url = f"{live_server}/lab.html?lab=linear-regression&embed=1&controls={controls}&lang={lang}"
    pg = open_page(url, size)
    pg.wait_for_function("() => document.querySelector('#view .js-plotly-plot')")
    pg.wait_for_function("() => document.querySelector('.try-next, .try-bar')")
    shown = pg.evaluate(SHOWN_CONTROLS)
    wanted = set(controls.split(","))
    assert {name for name, on in shown.items() if on} == wanted, shown
    if controls == "play,step" and size is DESKTOP:
        screenshot(pg, f"walkthrough-embed-{lang}")


# -- m9: log axes labelled only at ticks a learner reads --------------------------------------

SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")

# Every log-axis chart's y tick labels (the dashboard's and a view's own, e.g. rnn's through time), bottom to top: [[text, screen y], ...] per chart.
LOG_TICKS = """() => [...document.querySelectorAll('.js-plotly-plot')]
  .filter((gd) => gd._fullLayout && gd._fullLayout.yaxis && gd._fullLayout.yaxis.type === 'log'
    && gd.data.some((d) => (d.y || []).length))
  .map((gd) => [...gd.querySelectorAll('.ytick text')]
    .map((t) => [t.textContent, t.getBoundingClientRect().y])
    .sort((a, b) => b[1] - a[1]))"""


def tick_value(text: str) -> float:
    """0.05 / 20 / 2×10⁻⁵ / 10⁶ (or plotly's 10<sup>2</sup>) -> the number it says; a bare
    "2" under "1" says 2, not 0.2."""
    text = text.replace("\u2212", "-").replace(",", "")
    if "\u200b" in text or any(c in text for c in "⁰¹²³⁴⁵⁶⁷⁸⁹⁻"):  # a power of ten
        m = re.fullmatch(
            r"(?:(\d+(?:\.\d+)?)×)?10(-?\d+)", text.replace("\u200b", "").translate(SUPERSCRIPT)
        )
        assert m, text
        return float(m.group(1) or 1) * 10 ** int(m.group(2))
    return float(text)


@pytest.mark.parametrize(
    ("lab", "lang", "steps"),
    [("transformer", "en", 60), ("transformer", "zh", 60), ("rnn", "zh", 20)]
    + [("embeddings", "en", 20), ("ffn-moe", "zh", 20), ("attention-variants", "en", 20)],
)
def test_log_axes_label_only_ticks_whose_text_is_their_value(
    open_page, live_server, lab, lang, steps
):
    pg = open_page(f"{live_server}/lab.html?lab={lab}&lang={lang}")
    # transformer at 60: plotly labelled "2 5 10² 2 5 10³ 2" (read as 2 above 1000)
    play_to(pg, steps)
    pg.wait_for_function(f"() => ({LOG_TICKS})().some((ticks) => ticks.length >= 2)")
    charts = pg.evaluate(LOG_TICKS)
    assert charts
    for ticks in charts:
        values = [tick_value(text) for text, _ in ticks]
        # Read bottom to top, each label is a larger number than the one below it.
        assert all(a < b for a, b in zip(values, values[1:], strict=False)), ticks
        assert len(ticks) <= 9, ticks
    if lab == "transformer":
        screenshot(pg, f"walkthrough-logticks-{lab}-{lang}")


# -- m15: an empty chart's axis, and one value's ----------------------------------------------

# Linear charts holding no value or values in 0..1 only: their y range, and their values.
UNIT_CHARTS = """() => [...document.querySelectorAll('.dash-chart .js-plotly-plot')]
  .filter((gd) => gd._fullLayout && gd._fullLayout.yaxis.type === 'linear')
  .map((gd) => ({ range: gd._fullLayout.yaxis.range,
    ys: gd.data.flatMap((d) => [...(d.y || [])]).filter((v) => Number.isFinite(v)) }))
  .filter((c) => c.ys.every((v) => v >= 0 && v <= 1))"""


@LANGS
@pytest.mark.parametrize("lab", ["depth", "attention-variants"])
def test_step_zero_charts_have_a_unit_axis_not_plotlys_default(open_page, live_server, lab, lang):
    pg = open_page(f"{live_server}/lab.html?lab={lab}&lang={lang}")
    pg.wait_for_function(f"() => ({UNIT_CHARTS})().length >= 1")
    pg.wait_for_timeout(500)  # the view's step-0 rows drawn
    for chart in pg.evaluate(UNIT_CHARTS):
        lo, hi = chart["range"]
        # 0..1 with a little room: not −1…4 (empty) nor 0…1.5 (one accuracy of 0.5)
        assert -0.1 <= lo <= 0 and 1 <= hi <= 1.1, chart


# -- m13 and m20: zh names in depth, positions, kv-cache; kv-cache in KiB ---------------------

TRACE_NAMES = """() => [...document.querySelectorAll('.js-plotly-plot')]
  .flatMap((gd) => (gd.data || []).map((d) => d.name || ''))"""


@pytest.mark.parametrize(
    ("lab", "english"),
    [("depth", ["plain", "residual", "reference"]), ("positions", ["Learned", "Sinusoidal"])],
)
def test_zh_legends_name_the_arms_in_chinese(open_page, live_server, lab, english):
    pg = open_page(f"{live_server}/lab.html?lab={lab}&lang=zh")
    play_to(pg, 2)
    pg.wait_for_function(f"() => ({TRACE_NAMES})().length >= 3")
    names = pg.evaluate(TRACE_NAMES)
    assert not [n for n in names if any(w in n for w in english)], names
    screenshot(pg, f"walkthrough-zh-legends-{lab}")


def test_real_llm_logit_lens_reads_in_chinese(open_page, live_server):
    pg = open_page(f"{live_server}/lab.html?lab=linear-regression&lang=zh")
    said = pg.evaluate(
        """async () => { await import('/js/labs/real-llm/strings.js');
        const { t } = await import('/js/core/i18n.js');
        return ['real-llm.stream_lens', 'real-llm.lens_time', 'real-llm.lens'].map((k) => t(k)); }"""
    )
    assert all("logit lens（逐层读出）" in s and "Logit" not in s for s in said), said


KV_AXIS = """() => { const gd = [...document.querySelectorAll('.js-plotly-plot')]
  .find((g) => (g.data || []).some((d) => (d.y || []).length >= 2));
  return gd && { title: gd._fullLayout.yaxis.title.text,
    ticks: [...gd.querySelectorAll('.ytick text')].map((t) => t.textContent) }; }"""


@LANGS
def test_kv_cache_bytes_chart_speaks_kib(open_page, live_server, lang):
    pg = open_page(f"{live_server}/lab.html?lab=kv-cache&lang={lang}")
    play_to(pg, 6)
    pg.wait_for_function(KV_AXIS)
    axis = pg.evaluate(KV_AXIS)
    assert "KiB" in axis["title"] and "bytes" not in axis["title"].replace("1,024 bytes", "")
    assert axis["ticks"] and not [t for t in axis["ticks"] if "×" in t or "10" in t and "⁰" in t]
    screenshot(pg, f"walkthrough-kv-kib-{lang}")


# -- m12: a paste over a box's limit is said --------------------------------------------------


@pytest.mark.parametrize(
    ("lab", "box", "limit", "lang", "size"),
    [
        ("transformer", "input.tf-text", 80, "en", DESKTOP),
        ("transformer", "input.tf-text", 80, "zh", PHONE),
        ("seq2seq", "input.s2s-input", 24, "zh", DESKTOP),
        ("seq2seq", "input.s2s-input", 24, "en", PHONE),
        ("real-bert", "#view textarea[name=text]", 3000, "zh", DESKTOP),
        ("real-llm", "#view textarea[name=prompt]", 2000, "en", DESKTOP),
    ],
    ids=["transformer-en", "transformer-zh-phone", "seq2seq-zh", "seq2seq-en-phone"]
    + ["real-bert-zh", "real-llm-en"],
)
def test_a_paste_cut_at_the_limit_is_said(open_page, live_server, lab, box, limit, lang, size):
    pg = open_page(f"{live_server}/lab.html?lab={lab}&lang={lang}", size)
    pg.context.grant_permissions(["clipboard-read", "clipboard-write"])
    pg.wait_for_selector(box)
    pg.wait_for_function(f"(b) => document.querySelector(b).maxLength === {limit}", arg=box)
    pasted = "abcde" * 1000  # 5,000 characters
    pg.evaluate("(text) => navigator.clipboard.writeText(text)", pasted)
    pg.fill(box, "")
    pg.focus(box)
    pg.keyboard.press("Control+V")
    assert len(pg.input_value(box)) == limit  # the browser cut it
    note = pg.locator(f"{box} ~ .paste-cut")
    note.wait_for()
    said = note.inner_text()
    assert f"{limit:,}" in said and "5,000" in said
    assert ("cut to" in said) if lang == "en" else ("已截成" in said)
    screenshot(pg, f"walkthrough-paste-{lab}-{lang}")
    pg.keyboard.press("Backspace")  # an edit: the note goes
    assert not note.is_visible()


# -- m10: depth's waterfall: vanished gradients drawn, row labels readable --------------------

# Each row's middle pixel in the waterfall's plot area: its alpha (0: left blank).
WF_ROWS = """() => { const c = document.querySelector('.dash-waterfall canvas.wf-canvas');
  const d = c.dataset, s = c.width / c.getBoundingClientRect().width;
  const x = Math.floor((Number(d.labelW) + (c.getBoundingClientRect().width - Number(d.labelW)) / 2) * s);
  const ctx = c.getContext('2d');
  return { ...d, alpha: [...Array(Number(d.rows)).keys()].map((r) =>
    ctx.getImageData(x, Math.floor((r + 0.5) * Number(d.rowH) * s), 1, 1).data[3]) }; }"""


@LANGS
@SIZES
def test_depth_waterfall_draws_vanished_gradients_and_readable_labels(
    open_page, live_server, lang, size
):
    pg = open_page(f"{live_server}/lab.html?lab=depth&lang={lang}", size)
    play_to(pg, 3)
    pg.wait_for_selector(".dash-waterfall canvas.wf-canvas:not([hidden])")
    pg.wait_for_function("() => document.querySelector('.wf-canvas').dataset.rows > 60")
    wf = pg.evaluate(WF_ROWS)
    assert wf["vanished"] == "1"  # the plain stack's gradients underflow to 0 on the defaults
    blank = [r for r, a in enumerate(wf["alpha"]) if a == 0]
    assert not blank, blank  # every row coloured: a vanished gradient at the scale's low end
    assert float(wf["labelPx"]) >= 9
    # labels at least 10 px apart (three arms' bands each labelled from their first row)
    labelled, rows, row_h = int(wf["labelled"]), int(wf["rows"]), float(wf["rowH"])
    assert labelled >= 3 and (labelled - 3) * 10 <= rows * row_h
    pg.locator(".dash-waterfall").scroll_into_view_if_needed()
    screenshot(pg, f"walkthrough-waterfall-{lang}-{size['width']}")


# -- m7: tables fit, or show that they scroll -------------------------------------------------

# Every box in the view that scrolls a table sideways: its widths and whether it shows so.
TABLE_SCROLLERS = """() => { const out = [];
  for (const table of document.querySelectorAll('#view table')) {
    for (let e = table; e && e.id !== 'view'; e = e.parentElement) {
      if (e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0) out.push({
        cls: e.className, sw: e.scrollWidth, cw: e.clientWidth, shown: e.dataset.scrollsX === '1' });
    }
  }
  return out; }"""
# A column header's right edge, and the edge of the box that clips it.
COLUMN = """(text) => { const th = [...document.querySelectorAll('#view th')]
  .find((h) => h.textContent.includes(text));
  if (!th) return null;
  let clip = document.documentElement.clientWidth;
  for (let e = th.parentElement; e; e = e.parentElement) {
    const ox = getComputedStyle(e).overflowX;
    if (ox === 'auto' || ox === 'scroll' || ox === 'hidden') clip = Math.min(clip, e.getBoundingClientRect().right);
  }
  return { right: th.getBoundingClientRect().right, clip }; }"""


@LANGS
@SIZES
@pytest.mark.parametrize(
    ("lab", "columns"),
    [
        ("transformer", {"en": ["cross-entropy"], "zh": ["交叉熵"]}),
        ("optimizers", {"en": ["β2"], "zh": ["β2"]}),
        ("attention-variants", {"en": ["solved"], "zh": ["学会"]}),
    ],
    ids=["transformer", "optimizers", "attention-variants"],
)
def test_tables_fit_or_show_their_sideways_scroll(open_page, live_server, lab, columns, lang, size):
    pg = open_page(f"{live_server}/lab.html?lab={lab}&lang={lang}", size)
    play_to(pg, 3)
    pg.wait_for_function("() => document.querySelectorAll('#view table tr').length > 3")
    pg.wait_for_timeout(600)  # the affordance follows the view's changes within 250 ms
    hidden = [s for s in pg.evaluate(TABLE_SCROLLERS) if not s["shown"]]
    assert not hidden, hidden
    for text in columns[lang]:  # the key column on screen, not behind the scroll
        col = pg.evaluate(COLUMN, text)
        assert col and col["right"] <= col["clip"] + 1, (text, col)
    if size is PHONE:
        screenshot(pg, f"walkthrough-tables-{lab}-{lang}-phone")
