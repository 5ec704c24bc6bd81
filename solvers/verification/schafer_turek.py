"""The Schafer-Turek cylinder benchmarks (Schafer & Turek 1996, "Benchmark computations of
laminar flow around a cylinder", Notes Numer. Fluid Mech. 52, 547-566): a cylinder of diameter
D = 0.1 at (0.2, 0.2) in a channel 2.2 x 0.41. Their reference values, and the figures of a
periodic run's force series."""

import numpy as np

DIAMETER = 0.1
# 2D-1 (Re = 20, steady): John & Matthies 2001 (Int. J. Numer. Meth. Fluids 37, 885-903) on
# fine finite-element grids; the recirculation length, which they did not give, is the middle
# of Schafer & Turek's 0.0842-0.0852.
STEADY = {"drag": 5.57953523384, "lift": 0.010618948146, "pressure_difference": 0.11752016697,
          "recirculation_length": 0.0847}
# 2D-2 (Re = 100, mean inflow velocity 1): the middles of Schafer & Turek's intervals
# 3.22-3.24, 0.99-1.01 and 0.295-0.305.
PERIODIC = {"max_drag": 3.23, "max_lift": 1.00, "strouhal": 0.300}
PERIOD = 1 / 3  # about D / (U St): the windows of the lift's peaks below


def shedding(t, drag, lift, window, mean_velocity=1.0):
    """The figures of a periodic run over its last `window` of time: max drag, max lift,
    Strouhal number D f / U with f from the lift's upward zero crossings (linear between
    records; None with fewer than two), and the lift's largest value near the last period's
    peak and near the one 4 periods before it (equal when the shedding is periodic)."""
    t, drag, lift = (np.asarray(a, np.float64) for a in (t, drag, lift))
    last = t >= t[-1] - window
    up = np.flatnonzero((lift[:-1] < 0) & (lift[1:] >= 0) & last[:-1])
    crossings = t[up] - lift[up] * (t[up + 1] - t[up]) / (lift[up + 1] - lift[up])
    strouhal = (DIAMETER / (np.diff(crossings).mean() * mean_velocity)
                if len(crossings) > 1 else None)
    earlier = (t > t[-1] - 5.1 * PERIOD) & (t <= t[-1] - 3.9 * PERIOD)
    latest = t > t[-1] - 1.2 * PERIOD
    return {"max_drag": float(drag[last].max()), "max_lift": float(lift[last].max()),
            "strouhal": None if strouhal is None else float(strouhal),
            "lift_peak_earlier": float(lift[earlier].max()) if earlier.any() else None,
            "lift_peak_last": float(lift[latest].max())}
