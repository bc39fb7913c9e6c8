"""Every main page is usable on a phone (390×844) and at 1280×800 without sideways scrolling of
the page body; wide tables scroll inside their own box (issue 17).

With ``DYNABENCH_SCREENSHOTS=<folder>`` the test also saves a full-page screenshot of each page
at each size there (``docs/screenshots/`` holds the committed ones, linked from the README).
"""

import os
from pathlib import Path

import pytest

from tests.browser.conftest import PAGES
from tests.browser_support import DESKTOP, PHONE, browser_only, horizontal_overflow, log_in

pytestmark = browser_only
SIZES = {"phone": PHONE, "desktop": DESKTOP}


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize(("name", "path", "who"), PAGES, ids=[p[0] for p in PAGES])
def test_no_sideways_scrolling(page, client, live_server, site, request, name, path, who, size):
    viewport = SIZES[size]
    page.set_viewport_size(viewport)
    if who:
        log_in(page, client, request.getfixturevalue(who), live_server)
    response = page.goto(path.format(model=site["model"].pk))
    assert response.status == 200
    assert horizontal_overflow(page) == 0
    # every control can be reached: nothing interactive lies beyond the window's right edge
    beyond = page.evaluate(
        """(width) => [...document.querySelectorAll('a, button, input, select, textarea')]
            .filter(el => el.offsetParent !== null && !el.closest('.table-scroll'))
            .filter(el => el.getBoundingClientRect().right > width + 1)
            .map(el => el.outerHTML.slice(0, 80))""",
        viewport["width"],
    )
    assert beyond == []
    folder = os.environ.get("DYNABENCH_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}-{viewport['width']}x{viewport['height']}.png"), full_page=True)
