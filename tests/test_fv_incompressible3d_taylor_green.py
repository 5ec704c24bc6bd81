"""The viscous Taylor-Green vortex at Re = 1600 (cases/taylor_green3d_re1600.toml): the kinetic
energy the solver records every step on the device (/series/kinetic_energy), its early decay
against the exact initial dissipation rate on the host, and on the GPU the peak of the
dissipation rate -dE/dt against the spectral DNS.

Reference: the 512^3 pseudo-spectral DNS of case C3.5 of the International Workshop on
High-Order CFD Methods (the reference file spectral_Re1600_512.gdiag, columns t, E, -dE/dt,
enstrophy; see DeBonis, NASA/TM-2013-217850, for the case). The file was not reachable here;
its peak of -dE/dt, 0.01286 at t = 8.97, and E = 0.1184, 0.0864, 0.0544, 0.0216 at t = 5, 9, 12,
20 are as tabulated in the validation page of the Mallard solver
(github.com/MatthewBonanni/mallard, docs validation, "Taylor-Green vortex at Re = 1600"),
which compares against that file.
"""

from pathlib import Path

import h5py
import numpy as np
import pytest

from solvers import load_case

CASE = Path(__file__).parent.parent / "cases" / "taylor_green3d_re1600.toml"
DNS_PEAK_RATE, DNS_PEAK_TIME = 0.01286, 8.97
DNS_ENERGY = {5.0: 0.1184, 9.0: 0.0864}


def dissipation_rate(t, energy, span):
    """-dE/dt at the middle of windows of about `span` time: (E(t - s/2) - E(t + s/2)) / s,
    from the per-step series (a difference over many steps, so that the fp32 rounding of E,
    1e-7 of it, stays far below the change it measures)."""
    t, energy = np.asarray(t), np.asarray(energy)
    lo = np.searchsorted(t, t - span / 2)
    hi = np.minimum(np.searchsorted(t, t + span / 2), len(t) - 1)
    keep = hi > lo
    return 0.5 * (t[lo] + t[hi])[keep], -(energy[hi] - energy[lo])[keep] / (t[hi] - t[lo])[keep]


def run_case(tmp_path, backend, **overrides):
    run = load_case(CASE, **{"run.backend": backend, "output.dir": str(tmp_path),
                             "output.plot": False, **overrides})
    run.run()
    with h5py.File(tmp_path / "taylor_green3d_re1600.h5") as f:
        return f["series/t"][:], f["series/kinetic_energy"][:]


def test_energy_starts_at_one_eighth_and_decays_at_the_initial_dissipation(tmp_path):
    """At t = 0 the mean kinetic energy is exactly 1/8 (also on the grid: sin^2 sampled at
    equidistant points averages to 1/2) and the flow is laminar: -dE/dt = nu <|grad u|^2> =
    nu 3/4 (six gradient components of mean square 1/8). On 16^3 cells the second differences
    see k^2 (sin(k h / 2) / (k h / 2))^2, 1.3 % less at k = 1, h = 2 pi / 16; over t < 0.5 the
    rate grows by less than that (the vortex only starts to stretch). Measured (host, fp32,
    4 steps): 0.982 of nu 3/4, E = 0.12502 after the first step. Bound 4 %."""
    t, energy = run_case(tmp_path, "host", **{"mesh.nx": 16, "mesh.ny": 16, "mesh.nz": 16,
                                              "time.end": 0.5, "output.interval": 0.5})
    nu = 1 / 1600
    assert energy[0] == pytest.approx(0.125, rel=0.01)
    rate = (energy[0] - energy[-1]) / (t[-1] - t[0])
    assert rate == pytest.approx(0.75 * nu, rel=0.04), rate / (0.75 * nu)


@pytest.mark.gpu
def test_dissipation_peak_matches_the_spectral_dns_at_256(tmp_path):
    """The case file's 256^3 cells to t = 11 (past the peak). The peak of -dE/dt (over
    windows of 0.1) and its time within 5 % of the DNS (the issue's target; unmeasured here),
    and the energy at t = 5 and 9 within 2 % (DeBonis 2013: second-order schemes at 256^3
    follow E closely before the peak; also unmeasured on this solver)."""
    t, energy = run_case(tmp_path, "cuda", **{"time.end": 11.0, "output.interval": 11.0})
    mid, rate = dissipation_rate(t, energy, span=0.1)
    peak = np.argmax(rate)
    assert rate[peak] == pytest.approx(DNS_PEAK_RATE, rel=0.05), (rate[peak], mid[peak])
    assert mid[peak] == pytest.approx(DNS_PEAK_TIME, rel=0.05), (rate[peak], mid[peak])
    for time, value in DNS_ENERGY.items():
        assert np.interp(time, t, energy) == pytest.approx(value, rel=0.02)
