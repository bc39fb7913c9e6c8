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
as they are. The outputs of one phase are a strided matrix-vector product over a sliding-window view
of the input when its windows do not overlap (``down`` ≥ the taps: 44.1 kHz to 16 kHz), else the sum
of ``down`` correlations of the input's residues with the kernel's (48 kHz to 16 kHz); neither
gathers the windows into a copy.
"""

from __future__ import annotations

import math

import numpy as np

ZERO_CROSSINGS = 16
ROLLOFF = 0.945


def to_mono(samples: np.ndarray) -> np.ndarray:
    """Return the mean of the channels of ``samples`` (shape ``(frames,)`` or ``(frames, channels)``) as float32."""
    samples = np.asarray(samples, dtype=np.float32)
    if samples.ndim == 1:
        return samples
    # A matrix-vector product (BLAS) with equal weights: ``mean(axis=1)`` walks the rows 20 times slower.
    return samples @ np.full(samples.shape[1], 1 / samples.shape[1], dtype=np.float32)


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
    windows = np.lib.stride_tricks.sliding_window_view(padded, taps)  # row b: the taps from input b + first
    out = np.empty(n_out, dtype=np.float32)
    # Output n reads the taps from input floor(n·down/up) with the kernel of phase (n·down) mod up; the
    # outputs r, r + up, r + 2·up, ... share their phase and step ``down`` inputs apart.
    for r in range(min(up, n_out)):
        base, kernel = (r * down) // up, kernels[(r * down) % up]
        count = len(range(r, n_out, up))
        if down >= taps:  # windows that do not overlap: one strided matrix-vector product (BLAS), no copy
            out[r::up] = windows[base:base + count * down:down] @ kernel
        else:  # overlapping windows: split the kernel by residue mod ``down``, one correlation per residue
            total = np.zeros(count, dtype=np.float32)
            for s in range(down):
                part = kernel[s::down]
                total += np.correlate(padded[base + s::down][:count + part.size - 1], part, mode="valid")
            out[r::up] = total
    return out
