"""Headless Chromium for the browser tests: fixtures (``browser``, ``page``, ``phone_page``) and helpers.

Fixtures (and the hook that closes the shared Chromium) are imported by the root ``conftest.py`` so every app's ``test_browser_*.py`` can use
them. Debian's ``/usr/bin/chromium`` drives the pages through Playwright against pytest-django's
``live_server``; tests using them are marked ``browser`` and skipped without Chromium.
"""

import functools
import os
import re
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
OUR_DISABLED_FEATURES = ["WebUIOmniboxPopup", "WebUIOmniboxAimPopup", "WebUIOmniboxFullPopup"]
"""Chromium features turned off on top of Playwright's own list: Chromium 15x's new headless mode
gives every window (one per Playwright context) the address bar's suggestion popup as a WebUI page
(``chrome://omnibox-popup.top-chrome/``) in a renderer process of its own, which no test sees; it
cost about 0.6 CPU-seconds per context in ``make test`` (64 contexts: 38 CPU-s)."""


@functools.cache
def playwright_disabled_features() -> tuple[str, ...]:
    """The Chromium features Playwright's launcher turns off (``disabledFeatures`` in
    playwright-core's ``chromiumSwitches.ts``: PaintHolding, MediaRouter, OptimizationHints, ...),
    read once per process from the driver bundle (3.6 MB of JavaScript) that the installed
    ``playwright`` package carries.

    Needed because Chromium keeps only the last ``--disable-features`` switch of its command line
    (``CommandLine::AppendSwitch`` replaces a switch's value) and Playwright puts ours after its
    own: passing ours alone would switch every one of Playwright's back on.

    Raises RuntimeError when the bundle or the list is not where this Playwright keeps it (a new
    Playwright version): better no browser test than browser tests on a Chromium set up otherwise."""
    import playwright

    package = Path(playwright.__file__).parent / "driver" / "package" / "lib"
    for source in (package / "coreBundle.js", package / "server" / "chromium" / "chromiumSwitches.js"):
        if source.exists():
            found = re.search(r"disabledFeatures = \[(.*?)\]", source.read_text(encoding="utf-8"), re.S)
            if found:
                names = re.findall(r'^\s*"(\w+)",?\s*$', found.group(1), re.M)
                if names:
                    return tuple(names)
    raise RuntimeError(f"Playwright's list of disabled Chromium features (disabledFeatures) was not found under {package}")


def chromium_args() -> list[str]:
    """Chromium's flags for the browser tests, after Playwright's own: new headless mode, no sandbox
    (containers), no GPU, no background networking, and one ``--disable-features`` naming
    Playwright's features and ours (``OUR_DISABLED_FEATURES``)."""
    features = list(dict.fromkeys([*playwright_disabled_features(), *OUR_DISABLED_FEATURES]))
    return ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-features=" + ",".join(features)]


DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
HANG_MS = 60000
"""Playwright's wait for an element, a navigation or a condition (ms): a ceiling that only catches
a hang, far above the normal time even on a loaded machine; never a verdict on speed."""

browser_only = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"),
]
"""``pytestmark`` of a browser test module."""

# Playwright's sync API runs an event loop in the test's thread; the ORM calls of a test are
# still plain synchronous calls between browser steps.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


class _SharedChromium:
    """One headless Chromium (and its Playwright driver) for a run of consecutive browser tests of
    this pytest process, started by the first of them and closed after the last
    (``pytest_runtest_teardown``): a launch costs about 1.3 CPU-seconds, and the suite orders the
    browser tests one after the other (``conftest.pytest_collection_modifyitems``). It is never left
    open under a test that does not use it: Playwright's sync API keeps an asyncio event loop
    running in the thread while it is started, and ``asyncio.run`` or asgiref's ``async_to_sync``
    refuse to run beside one."""

    def __init__(self):
        self.playwright = None
        self.chromium = None

    def get(self):
        """The running Chromium, launched first if there is none (or it crashed)."""
        if self.chromium is None or not self.chromium.is_connected():
            self.close()
            from playwright.sync_api import sync_playwright

            self.playwright = sync_playwright().start()
            self.chromium = self.playwright.chromium.launch(executable_path=str(CHROMIUM), args=chromium_args())
        return self.chromium

    def close(self):
        """Close Chromium and stop the driver (nothing to do when none runs)."""
        chromium, playwright, self.chromium, self.playwright = self.chromium, self.playwright, None, None
        try:
            if chromium is not None and chromium.is_connected():
                chromium.close()
        finally:
            if playwright is not None:
                playwright.stop()


_shared = _SharedChromium()


def uses_chromium(item) -> bool:
    """Whether the pytest item ``item`` (None: no item) asks for the ``browser`` fixture, itself or through another."""
    return item is not None and "browser" in getattr(item, "fixturenames", ())


@pytest.fixture
def browser():
    """Headless Chromium, shared with the browser tests just before and after this one in this
    process (``_SharedChromium``). Each test makes its own contexts (cookies, storage, cache); the
    ones it leaves open are closed after it."""
    chromium = _shared.get()
    yield chromium
    if chromium.is_connected():
        for context in chromium.contexts:
            context.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    """Before any fixture of a test that uses Chromium: have it running. Started later (after the
    ``db`` fixture opened the test's transaction), its event loop would hand the test's ORM calls
    another connection than the one holding that transaction: asgiref's ``Local``, which holds
    Django's connections, keeps one per running event loop."""
    if uses_chromium(item) and CHROMIUM.exists():
        _shared.get()
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """After a test's own teardown: close the shared Chromium unless the next test uses it too."""
    result = yield
    if not uses_chromium(nextitem):
        _shared.close()
    return result


def _page(browser, live_server, viewport):
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    page = context.new_page()
    page.set_default_timeout(HANG_MS)
    page.on("dialog", lambda dialog: dialog.accept())
    return context, page


@pytest.fixture
def page(browser, live_server):
    """A fresh 1280×800 page on the live server (its own cookies)."""
    context, page = _page(browser, live_server, DESKTOP)
    yield page
    context.close()


@pytest.fixture
def phone_page(browser, live_server):
    """A fresh 390×844 page (a phone) on the live server."""
    context, page = _page(browser, live_server, PHONE)
    yield page
    context.close()


@contextmanager
def fresh_page(browser, live_server, viewport=DESKTOP):
    """A page of a context of its own (as ``page`` gives each test), closed on leaving: for a test
    that checks several pages in turn on one seeded database, each after ``start_over``. Reusing
    one page saves a new context, renderer and fetch of every static file per page checked
    (about a second each on a loaded machine)."""
    context, page = _page(browser, live_server, viewport)
    try:
        yield page
    finally:
        context.close()


FAKE_MICROPHONE = ["--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream"]
"""Chromium's switches for a fake microphone (and camera) that the page may use without a prompt."""


@contextmanager
def microphone_page(browser, live_server, wav: Path, viewport=DESKTOP):
    """A page of a Chromium of its own (launched by the shared one's driver, closed on leaving) whose
    microphone plays ``wav`` (a WAV file, looped) and which may use it: switches ``FAKE_MICROPHONE``
    and ``--use-file-for-fake-audio-capture``, given at launch, so the shared Chromium cannot serve."""
    chromium = browser.browser_type.launch(
        executable_path=str(CHROMIUM), args=[*chromium_args(), *FAKE_MICROPHONE, f"--use-file-for-fake-audio-capture={wav}"],
    )
    try:
        context = chromium.new_context(base_url=live_server.url, viewport=viewport, permissions=["microphone"])
        page = context.new_page()
        page.set_default_timeout(HANG_MS)
        yield page
    finally:
        chromium.close()


def run_queued_jobs() -> None:
    """Run the jobs queued so far (training, default and evaluation queues) in this process, until none is left."""
    import django_rq
    from rq import SimpleWorker

    django_rq.get_worker("training", "default", "evaluation", worker_class=SimpleWorker).work(burst=True)


def console_errors(page) -> list[str]:
    """A list that collects ``page``'s browser console errors and uncaught exceptions as they happen."""
    errors = []
    page.on("console", lambda message: errors.append(f"{page.url}: {message.text}") if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(f"{page.url}: {error}"))
    return errors


def start_over(page, client, user, live_server) -> None:
    """Drop every cookie of ``page``'s context (session, CSRF, messages), then give it a logged-in
    session of ``user`` (None: stay anonymous): the next page is seen as on a first visit. The
    pages keep nothing in local or session storage, so only the HTTP cache of the static files
    carries over from the pages before."""
    page.context.clear_cookies()
    if user is not None:
        log_in(page, client, user, live_server)


def log_in(page, client, user, live_server) -> None:
    """Give ``page`` a logged-in session of ``user`` (through Django's test client)."""
    client.force_login(user)
    page.context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])


def save_screenshot(page, name: str, *, full_page: bool = True, **options) -> Path | None:
    """Save ``page`` as ``<name>.png`` in the folder that ``DYNABENCH_SCREENSHOTS`` names (created if
    missing; ``docs/screenshots`` refreshes the README's pictures), the whole page unless
    ``full_page=False``; ``options`` go to Playwright's ``page.screenshot``. Returns the file's path.

    Without the variable it takes none and returns None: a full-page screenshot costs Chromium
    0.1 to 0.3 s, and the browser tests took 71 of them (15 s of a run) that nobody looked at."""
    folder = os.environ.get("DYNABENCH_SCREENSHOTS")
    if not folder:
        return None
    path = Path(folder) / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path), full_page=full_page, **options)
    return path


def horizontal_overflow(page) -> int:
    """Pixels by which the page body is wider than the window (0: no sideways scrolling), once the
    page has loaded: right after a click on a link, Playwright returns when the new page is
    committed, when its document may have no element yet (``documentElement`` null)."""
    page.wait_for_load_state()
    return page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")


def serious_axe_violations(page) -> list[str]:
    """axe-core's serious and critical violations on the current page, one line each (empty: none)."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    found = []
    for violation in results.response["violations"]:
        if violation.get("impact") in {"serious", "critical"}:
            targets = [", ".join(node["target"]) if isinstance(node["target"], list) else str(node["target"]) for node in violation["nodes"][:5]]
            found.append(f"{violation['impact']}: {violation['id']} ({violation['help']}) at {'; '.join(targets)}")
    return found


def contrast_ratio(page, selector: str) -> float:
    """WCAG 2.x contrast ratio (1 to 21) of the text of the first element matching ``selector``
    against its own background colour, from the computed styles: (L1 + 0.05) / (L2 + 0.05) with L
    the relative luminance of sRGB (WCAG 2.1, "contrast ratio" and "relative luminance"
    definitions). For what axe-core leaves "incomplete" (a one-character count: "too short to
    determine if it is actual text content"); the element must paint an opaque background."""
    colours = page.eval_on_selector(selector, "e => [getComputedStyle(e).color, getComputedStyle(e).backgroundColor]")

    def luminance(css: str) -> float:
        parts = [float(x) for x in css[css.index("(") + 1:-1].replace("/", ",").replace(" ", ",").split(",") if x]
        assert len(parts) == 3 or parts[3] == 1, f"{selector}: not an opaque colour: {css}"
        linear = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in parts[:3]]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    lighter, darker = sorted((luminance(c) for c in colours), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)
