"""The Schafer-Turek figures of a periodic force series (solvers/verification/schafer_turek.py)
on series whose figures are known: a lift sin(2 pi f t) and a drag at twice its frequency."""

import numpy as np
import pytest

from solvers.verification.schafer_turek import shedding


def series(amplitude=1.0, frequency=3.0, growth=0.0, end=8.0, records=16001):
    """(t, drag, lift): lift amplitude sin(2 pi f t) (times exp(growth t)), drag 3.2 + 0.03
    sin(4 pi f t + 0.5), sampled at `records` times from 0 to `end`."""
    t = np.linspace(0.0, end, records)
    lift = amplitude * np.exp(growth * t) * np.sin(2 * np.pi * frequency * t)
    drag = 3.2 + 0.03 * np.sin(4 * np.pi * frequency * t + 0.5)
    return t, drag, lift


def test_figures_of_a_periodic_series():
    t, drag, lift = series(amplitude=0.98, frequency=2.95)
    figures = shedding(t, drag, lift, window=2.0)
    # Strouhal D f / U with D = 0.1, U = 1; the crossings linear between records 5e-4 apart
    assert figures["strouhal"] == pytest.approx(0.295, rel=1e-6)
    assert figures["max_lift"] == pytest.approx(0.98, rel=1e-4)  # (2 pi f dt)^2 / 8 below
    assert figures["max_drag"] == pytest.approx(3.23, rel=1e-6)
    assert figures["lift_peak_last"] == pytest.approx(figures["lift_peak_earlier"], rel=1e-4)


def test_a_growing_lift_has_unequal_peaks_and_the_mean_velocity_scales_strouhal():
    t, drag, lift = series(growth=0.1)
    figures = shedding(t, drag, lift, window=2.0, mean_velocity=2.0)
    assert figures["strouhal"] == pytest.approx(0.1 * 3.0 / 2.0, rel=1e-6)
    # 4 periods (4/3 time units) of growth at 0.1 a time unit: the peaks 14 % apart
    ratio = figures["lift_peak_last"] / figures["lift_peak_earlier"]
    assert ratio == pytest.approx(np.exp(0.1 * 4 / 3), rel=1e-3)


def test_a_series_too_short_for_two_crossings_has_no_strouhal_number():
    t, drag, lift = series(end=0.3, records=301)
    figures = shedding(t, drag, lift, window=2.0)
    assert figures["strouhal"] is None and figures["lift_peak_earlier"] is None
    assert figures["max_lift"] == pytest.approx(1.0, rel=1e-3)
