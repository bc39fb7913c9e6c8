"""The Chromium that consecutive browser tests share (``tests/browser_support.py``) stays up while
the next test uses it, and is closed, its event loop gone, before a test that does not: that test
can then run ``asyncio.run`` and asgiref's ``async_to_sync``, which refuse to run beside the
running event loop of Playwright's sync API."""

import asyncio
from types import SimpleNamespace

from asgiref.sync import async_to_sync

from tests import browser_support
from tests.browser_support import browser_only

pytestmark = browser_only


def _after(nextitem) -> None:
    """Run the teardown hook's part after the test's own teardown, as pytest does."""
    hook = browser_support.pytest_runtest_teardown(item=None, nextitem=nextitem)
    next(hook)
    try:
        hook.send(None)
    except StopIteration:
        pass


async def _answer():
    return 42


def test_kept_for_a_browser_test_closed_before_one_without():
    chromium = browser_support._shared.get()
    _after(SimpleNamespace(fixturenames=["page", "browser", "live_server"]))
    assert browser_support._shared.chromium is chromium and chromium.is_connected()

    _after(SimpleNamespace(fixturenames=["db", "client"]))
    assert browser_support._shared.chromium is None and not chromium.is_connected()
    assert asyncio.run(_answer()) == 42
    assert async_to_sync(_answer)() == 42


def test_closed_after_the_last_test():
    browser_support._shared.get()
    _after(None)
    assert browser_support._shared.chromium is None
    assert asyncio.run(_answer()) == 42
