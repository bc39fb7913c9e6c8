"""The browser tests' Chromium runs with Playwright's disabled features as well as ours.

Chromium keeps only the last ``--disable-features`` switch of its command line, and Playwright
puts the caller's flags after its own: a switch naming only our features (the address bar's WebUI
popups) turned every one of Playwright's back on (PaintHolding, MediaRouter, OptimizationHints,
HttpsUpgrades, ...). The test reads the command line the running Chromium was given, through the
DevTools protocol (``SystemInfo.getProcessInfo`` names the browser process) and ``/proc``, and
checks the switch Chromium applies.
"""

from pathlib import Path

from tests.browser_support import OUR_DISABLED_FEATURES, browser_only, playwright_disabled_features

pytestmark = browser_only


def test_the_switch_chromium_applies_names_playwrights_features_and_ours(browser):
    session = browser.new_browser_cdp_session()
    try:
        processes = session.send("SystemInfo.getProcessInfo")["processInfo"]
    finally:
        session.detach()
    [pid] = [p["id"] for p in processes if p["type"] == "browser"]
    arguments = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    switches = [a.removeprefix("--disable-features=") for a in arguments if a.startswith("--disable-features=")]
    assert switches, arguments
    applied = set(switches[-1].split(","))  # the last one: Chromium replaces a switch's value
    playwrights = playwright_disabled_features()
    assert {"PaintHolding", "MediaRouter", "OptimizationHints"} <= set(playwrights)  # the list was read, not guessed
    assert sorted(set(playwrights) - applied) == []
    assert sorted(set(OUR_DISABLED_FEATURES) - applied) == []
