"""Resampling audio to the rate a model reads (16 kHz mono for speech models), in numpy.

``torchaudio`` is not a dependency of the platform (its wheel is tied to one torch build, and
torch here installs from a local CPU wheel), so ``resample`` is a polyphase windowed-sinc
resampler written here, the method of ``torchaudio.functional.resample`` (its default
``sinc_interp_hann``; J. O. Smith, "Digital Audio Resampling Home Page", CCRMA, section
"Theory of Ideal Bandlimited Interpolation"): for a rational ratio ``up/down`` (the rates over
their greatest common divisor) each output sample is the sum of input samples around its time
weighted by a low-pass sinc kernel (cut-off at the lower Nyquist rate times ``ROLLOFF``, Hann
window of ``ZERO_CROSSINGS`` zero crossings each side); there are only ``up`` distinct kernels
(phases), computed once. Each phase's weights are normalised to sum to 1, so silence and DC stay
as they are. Work is done in blocks of ``BLOCK`` output samples to bound memory.
"""

from __future__ import annotations

import math

import numpy as np

ZERO_CROSSINGS = 16
ROLLOFF = 0.945
BLOCK = 32768


def to_mono(samples: np.ndarray) -> np.ndarray:
    """Return the mean of the channels of ``samples`` (shape ``(frames,)`` or ``(frames, channels)``) as float32."""
    samples = np.asarray(samples, dtype=np.float32)
    return samples if samples.ndim == 1 else samples.mean(axis=1, dtype=np.float32)


def _kernels(up: int, down: int) -> tuple[np.ndarray, int]:
    """``(kernels of shape (up, taps), first tap offset)`` of the ``up`` phases."""
    cutoff = min(1.0, up / down) * ROLLOFF  # in cycles per input sample × 2 (1 = the input's Nyquist rate)
    width = int(math.ceil(ZERO_CROSSINGS / cutoff))
    offsets = np.arange(-width + 1, width + 1)  # taps relative to floor(t)
    phases = np.arange(up)[:, None] / up  # fractional part of t for each phase
    t = offsets[None, :] - phases  # input sample time minus output time, in input samples
    window = np.where(np.abs(t) < width, 0.5 + 0.5 * np.cos(np.pi * t / width), 0.0)
    kernels = cutoff * np.sinc(cutoff * t) * window
    kernels /= kernels.sum(axis=1, keepdims=True)
    return kernels.astype(np.float32), int(offsets[0])


def resample(samples: np.ndarray, rate: int, target_rate: int) -> np.ndarray:
    """Return mono float32 ``samples`` (shape ``(frames,)``) at ``rate`` Hz resampled to
    ``target_rate`` Hz: ``ceil(frames × target_rate / rate)`` samples (see the module docstring).
    The same rate returns a float32 copy. Raises ``ValueError`` for a rate ≤ 0 or samples of more
    than one dimension."""
    samples = np.asarray(samples, dtype=np.float32)
    if samples.ndim != 1:
        raise ValueError("resample takes mono samples of shape (frames,); mix channels with to_mono first")
    if rate <= 0 or target_rate <= 0:
        raise ValueError(f"sample rates must be positive (got {rate} and {target_rate})")
    if rate == target_rate or samples.size == 0:
        return samples.copy()
    g = math.gcd(rate, target_rate)
    up, down = target_rate // g, rate // g
    kernels, first = _kernels(up, down)
    taps = kernels.shape[1]
    n_out = int(math.ceil(samples.size * up / down))
    padded = np.concatenate([np.zeros(-first, np.float32), samples, np.zeros(taps + down, np.float32)])
    out = np.empty(n_out, dtype=np.float32)
    steps = np.arange(taps)
    for start in range(0, n_out, BLOCK):
        n = np.arange(start, min(n_out, start + BLOCK), dtype=np.int64)
        base = (n * down) // up  # floor of each output's time in input samples
        phase = (n * down) % up
        windows = padded[base[:, None] + steps[None, :]]  # padded index = input index - first
        out[start:start + n.size] = np.einsum("ij,ij->i", windows, kernels[phase])
    return out
