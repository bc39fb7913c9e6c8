"""``tasks.data.resample.resample`` (numpy polyphase windowed sinc): a tone below the new Nyquist rate
comes out as the same tone at the new rate (44.1 kHz, 48 kHz and 8 kHz to 16 kHz), a tone above it is
removed rather than folded back, silence stays silent, and the length is ``ceil(n · new / old)``."""

import math

import numpy as np
import pytest

from tasks.data.resample import resample, to_mono
from tests.audio_support import tone


@pytest.mark.parametrize("rate", [44100, 48000, 22050, 8000])
def test_a_tone_keeps_its_shape_at_16_khz(rate):
    samples = tone(440, seconds=1.0, rate=rate)
    out = resample(samples, rate, 16000)
    assert out.dtype == np.float32 and out.size == math.ceil(samples.size * 16000 / rate)
    expected = 0.3 * np.sin(2 * np.pi * 440 * np.arange(out.size) / 16000)
    assert np.abs(out[300:-300] - expected[300:-300]).max() < 1e-3


def test_a_tone_above_the_new_nyquist_rate_is_removed_not_folded():
    out = resample(tone(12000, rate=44100), 44100, 16000)
    assert np.sqrt(np.mean(out[300:-300] ** 2)) < 1e-3  # 0.21 RMS in; a fold would land at 4 kHz


def test_silence_stays_silent_and_channels_are_averaged():
    assert not resample(np.zeros(4410, np.float32), 44100, 16000).any()
    stereo = np.stack([np.ones(10, np.float32), np.zeros(10, np.float32)], axis=1)
    assert to_mono(stereo).tolist() == [0.5] * 10
    with pytest.raises(ValueError, match="mono samples"):
        resample(stereo, 16000, 8000)
