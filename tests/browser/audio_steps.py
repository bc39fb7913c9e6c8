"""Steps of the audio browser tests: people with roles, the clips of a fake microphone and of files,
recording or choosing a clip on the write page, and checks every audio page passes."""

from pathlib import Path

import numpy as np
from django.contrib.auth.models import Group, User

from tests.audio_support import encode, tone
from tests.browser_support import horizontal_overflow

RECORD_MS = 1500
"""How much the page records before the test presses Stop, read from the page's own count (ms)."""


def user(username, *roles):
    """A user with ``roles`` (group names) and a password."""
    person = User.objects.create_user(username=username, password="pw-12345-long")
    person.groups.add(*Group.objects.filter(name__in=roles))
    return person


def clip_path(folder: Path, name: str, freq: float, *, seconds: float = 2.0, rate: int = 48000) -> Path:
    """Write a tone of ``freq`` Hz as ``folder/name`` (its extension picks the format); return the path."""
    path = Path(folder) / name
    path.write_bytes(encode(tone(freq, seconds=seconds, rate=rate), name.rsplit(".", 1)[-1], rate=rate))
    return path


def dominant_hz(samples: np.ndarray, rate: int) -> float:
    """The frequency (Hz) of the largest peak of ``samples``' spectrum."""
    spectrum = np.abs(np.fft.rfft(samples * np.hanning(len(samples))))
    return float(np.fft.rfftfreq(len(samples), 1 / rate)[int(np.argmax(spectrum))])


def shown_clip(page) -> str:
    """The sha256 of the clip the write page's workspace plays."""
    return page.get_attribute("#workspace [data-context-audio]", "data-context-audio")


def _use_clip(page, before: str) -> str:
    page.click("[data-audio-upload] button[type=submit]")
    page.wait_for_function(
        "sha => { const a = document.querySelector('#workspace [data-context-audio]'); return a && a.dataset.contextAudio !== sha; }",
        arg=before,
    )
    return shown_clip(page)


def record_clip(page) -> str:
    """On the write page: press Record, let the fake microphone play ``RECORD_MS`` into the recorder,
    press Stop, wait until the page holds the recording as a WAV, then use it. Returns the new clip's
    sha256 (the workspace now plays it)."""
    before = shown_clip(page)
    form = page.locator("[data-audio-upload]")
    assert form.locator("[data-stop]").is_hidden() and form.locator("[data-recording]").is_hidden()
    form.locator("[data-record]").click()
    page.wait_for_function(f"() => Number(document.querySelector('[data-audio-upload]').dataset.recordedMs) >= {RECORD_MS}")
    form.locator("[data-stop]").click()
    page.wait_for_function("() => document.querySelector('[data-audio-upload]').dataset.recorded === 'ready'")
    assert form.locator("[data-recording]").get_attribute("src").startswith("blob:")
    assert page.evaluate("() => document.querySelector('#id_own_clip').files[0].type") == "audio/wav"
    return _use_clip(page, before)


def upload_clip(page, path: Path) -> str:
    """On the write page: choose the file ``path`` as the annotator's own clip and use it; return its sha256."""
    before = shown_clip(page)
    page.set_input_files("#id_own_clip", str(path))
    page.wait_for_function("() => document.querySelector('[data-audio-upload]').dataset.recorded === 'ready'")
    return _use_clip(page, before)


def play_and_pause_with_p(page) -> None:
    """On the validation queue: press p and wait until the example's clip plays (not paused, its
    position past 0), press p again and wait until it is paused."""
    player = "#review [data-context-audio] audio"
    page.locator(player).wait_for()
    page.keyboard.press("p")
    page.wait_for_function(f"() => {{ const a = document.querySelector('{player}'); return !a.paused && a.currentTime > 0; }}")
    page.keyboard.press("p")
    page.wait_for_function(f"() => document.querySelector('{player}').paused")


def fits(page) -> None:
    """The page neither scrolls sideways nor hides its players."""
    assert horizontal_overflow(page) == 0, page.url
    for player in page.locator("audio:visible").all():
        box = player.bounding_box()
        assert box and box["width"] > 100 and box["x"] >= 0 and box["x"] + box["width"] <= page.viewport_size["width"], page.url
