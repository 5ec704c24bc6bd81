"""The lid-driven cavity at Re = 100 against Ghia, Ghia & Shin (1982), "High-Re solutions for
incompressible flow using the Navier-Stokes equations and a multigrid method", J. Comput. Phys.
48, 387-411: Tables I and II, the velocity profiles through the cavity's centre, typed in from
the paper (their 129 x 129 grid). Run through the case file cases/cavity_re100.toml."""

from pathlib import Path

import h5py
import numpy as np
import pytest

from solvers import load_case

CASE = Path(__file__).parent.parent / "cases" / "cavity_re100.toml"

# Table I, Re = 100: u along the vertical line x = 0.5.
GHIA_Y = [1.0000, 0.9766, 0.9688, 0.9609, 0.9531, 0.8516, 0.7344, 0.6172, 0.5000, 0.4531,
          0.2813, 0.1719, 0.1016, 0.0703, 0.0625, 0.0547, 0.0000]
GHIA_U = [1.00000, 0.84123, 0.78871, 0.73722, 0.68717, 0.23151, 0.00332, -0.13641, -0.20581,
          -0.21090, -0.15662, -0.10150, -0.06434, -0.04775, -0.04192, -0.03717, 0.00000]
# Table II, Re = 100: v along the horizontal line y = 0.5.
GHIA_X = [1.0000, 0.9688, 0.9609, 0.9531, 0.9453, 0.9063, 0.8594, 0.8047, 0.5000, 0.2344,
          0.2266, 0.1563, 0.0938, 0.0781, 0.0703, 0.0625, 0.0000]
GHIA_V = [0.00000, -0.05906, -0.07391, -0.08864, -0.10313, -0.16914, -0.22445, -0.24533,
          0.05454, 0.17527, 0.17507, 0.16077, 0.12317, 0.10890, 0.10091, 0.09233, 0.00000]


def centreline_errors(path):
    """Max |u - Ghia| and |v - Ghia| at the table's points, the run file's centreline profiles
    interpolated linearly (with the wall values at both ends)."""
    with h5py.File(path) as f:
        y, u = f["profiles/u_vertical_centreline"][:].T
        x, v = f["profiles/v_horizontal_centreline"][:].T
    u_at = np.interp(GHIA_Y, np.r_[0.0, y, 1.0], np.r_[0.0, u, 1.0])
    v_at = np.interp(GHIA_X, np.r_[0.0, x, 1.0], np.r_[0.0, v, 0.0])
    return np.abs(u_at - GHIA_U).max(), np.abs(v_at - GHIA_V).max()


def run_cavity(tmp_path, backend, n, **overrides):
    run = load_case(CASE, **{"mesh.nx": n, "mesh.ny": n, "run.backend": backend,
                             "output.dir": str(tmp_path), "output.plot": False, **overrides})
    result = run.run()
    return run, result


def test_cavity_re100_centrelines_match_ghia_on_a_coarse_grid(tmp_path):
    """32 x 32 cells on the host in CI (2200 steps to the steady state, 5 s). Measured
    differences from the table: u 0.0035, v 0.0071 (16^2: 0.019, 0.015; 48^2: 0.0040, 0.0082).
    u: the grid's discretisation error, shrinking with it; bound 0.006. v: its largest
    difference sits in the downflow along the wall x = 1 (x = 0.86 to 0.97) and does not
    shrink from 32^2 to 48^2 (the same in fp64 and with QUICK advection); an independent
    stream-function/vorticity solver (scripts/cavity_psi_omega.py) on Ghia's own 128^2 grid
    differs from the table there by the same -0.0084, so that part is the table's; bound
    0.012. Stream function minimum: Ghia -0.103423, measured -0.1016 (the 32^2 grid's
    error); bound 0.005."""
    run, result = run_cavity(tmp_path, "host", 32)
    # the steady test ended it
    assert run.simulation.stopped == "steady state reached" and result.t < 60
    u_error, v_error = centreline_errors(tmp_path / "cavity_re100.h5")
    assert u_error < 0.006 and v_error < 0.012, (u_error, v_error)
    # The run file holds the fields and the per-step series.
    with h5py.File(tmp_path / "cavity_re100.h5") as f:
        assert set(f["fields"]) == {"u", "v", "p", "vorticity", "stream_function"}
        assert f["fields/u"].shape == (32, 32)
        assert f["series/t"].shape == (result.steps,)
        assert f["fields/stream_function"][:].min() == pytest.approx(-0.103423, abs=0.005)


@pytest.mark.gpu
def test_cavity_re100_centrelines_match_ghia_at_128(tmp_path):
    """128 x 128 cells on the GPU, run to t = 30 (the slowest mode at Re = 100 decays at about
    0.5 per unit time, so what is left of the start is e^-15 of it). u: the scheme's error at
    128^2 (second order from 0.0035 at 32^2: 2e-4) plus Ghia's own error on their 129^2 grid,
    about 1e-3 (the stream-function/vorticity check differs from the table by up to 0.0043 in
    u at 128^2); bound 0.005. v: the table's -0.008 at x = 0.86 (see the CI test); bound
    0.012."""
    _, _ = run_cavity(tmp_path, "cuda", 128, **{"scheme.steady_tolerance": 0.0,
                                                 "time.end": 30.0})
    u_error, v_error = centreline_errors(tmp_path / "cavity_re100.h5")
    assert u_error < 0.005 and v_error < 0.012, (u_error, v_error)
