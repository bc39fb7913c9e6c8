"""The two audio variants of robustness are what they say: the noisy clip's signal-to-noise ratio,
measured as a power ratio, is the SNR asked for, with the same noise on every run; the sped-up clip
lasts 1/1.1 as long and sounds 1.1 times higher."""

import math

import numpy as np
import pytest

from leaderboard.audio_perturbations import NOISE_SNR_DB, SPEED, add_noise, change_speed
from tests.audio_support import noise, sweep, tone


def _snr_db(clean: np.ndarray, noisy: np.ndarray) -> float:
    added = noisy.astype(np.float64) - clean
    return 10 * math.log10(np.mean(clean.astype(np.float64) ** 2) / np.mean(added**2))


@pytest.mark.parametrize("clip", [tone(seconds=1.0), sweep(seconds=0.7), noise(seconds=0.4, amplitude=0.02)], ids=["tone", "sweep", "noise"])
def test_the_noise_is_at_the_snr(clip):
    assert NOISE_SNR_DB == 10.0
    assert _snr_db(clip, add_noise(clip, seed=7)) == pytest.approx(10.0, abs=1e-3)
    assert _snr_db(clip, add_noise(clip, seed=7, snr_db=20.0)) == pytest.approx(20.0, abs=1e-3)


def test_the_noise_is_the_same_for_a_seed_and_silence_stays_silent():
    clip = tone(seconds=0.5)
    assert np.array_equal(add_noise(clip, seed=3), add_noise(clip, seed=3))
    assert not np.array_equal(add_noise(clip, seed=3), add_noise(clip, seed=4))
    silence = np.zeros(800, dtype=np.float32)
    assert np.array_equal(add_noise(silence, seed=3), silence)


def test_the_speed_change_shortens_by_the_factor_and_raises_the_pitch():
    clip = tone(400.0, seconds=2.0)
    faster = change_speed(clip)

    assert SPEED == 1.1
    assert len(faster) == math.ceil(len(clip) / 1.1)
    assert len(faster) / 16000 == pytest.approx(2.0 / 1.1, abs=1 / 16000)
    spectrum = np.abs(np.fft.rfft(faster * np.hanning(len(faster))))
    peak_hz = np.argmax(spectrum) * 16000 / len(faster)
    assert peak_hz == pytest.approx(440.0, abs=16000 / len(faster))
