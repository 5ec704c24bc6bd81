"""The lid-driven cubic cavity at Re = 1000 (cases/cavity3d_re1000.toml) against the spectral
solution of Albensoeder & Kuhlmann (2005), and the case file's output on the host.

Reference: S. Albensoeder, H. C. Kuhlmann, "Accurate three-dimensional lid-driven cavity
flow", J. Comput. Phys. 206 (2005) 536-558, doi:10.1016/j.jcp.2004.12.024: Chebyshev
collocation, the cube with all walls at rest but the lid, Re = 1000; Tables 5 and 6, the
velocity on the two centrelines of the mid-plane, at Ghia's 17 points. The paper was not
reachable here; the values below are those of its tables as redistributed (already divided by
Re, i.e. in units of the lid speed) in github.com/tum-pbs/PICT, tests/validations.py at commit
a95d7f9d0713262a1bff2bd9e2be5a203ee69208, function lid_driven_cavity_3D, arrays
reference_coords_x_T5 / reference_vel_v and reference_coords_y_T6 / reference_vel_u, key
(1000, 1, 1, False), mapped to this solver's frame (lid y = 1 moving along +x, spanwise z):
A&K's wall-normal coordinate x_AK (lid at -0.5) becomes y = 0.5 - x_AK with u unchanged, and
their y_AK becomes x = y_AK + 0.5 with the vertical velocity changing sign (the mapping and the
signs checked against the extrema below, and by hand: u = 1 at the lid, downflow near the wall
x = 1). Extrema (A&K, as quoted in Table 1 of Ben Beya & Lili, C. R. Mecanique 336 (2008)
863-872): u_min = -0.2803833 at y = 0.12419, v_min = -0.4350186 at x = 0.90957, v_max =
0.2466511 at x = 0.10913.
"""

from pathlib import Path

import h5py
import numpy as np
import pytest

from solvers import load_case

CASE = Path(__file__).parent.parent / "cases" / "cavity3d_re1000.toml"

# u along the vertical centreline x = z = 1/2 (A&K Table 5).
AK_Y = [0.0000, 0.0547, 0.0625, 0.0703, 0.1016, 0.1719, 0.2813, 0.4531, 0.5000, 0.6172,
        0.7344, 0.8516, 0.9531, 0.9609, 0.9688, 0.9766, 1.0000]
AK_U = [0.00000, -0.20623, -0.22283, -0.23696, -0.27293, -0.25160, -0.10999, -0.00612,
        0.00802, 0.03905, 0.07334, 0.12183, 0.33171, 0.39821, 0.48443, 0.58964, 1.00000]
# v along the horizontal centreline y = z = 1/2 (A&K Table 6, sign changed: see above).
AK_X = [0.0000, 0.0625, 0.0703, 0.0781, 0.0938, 0.1563, 0.2266, 0.2344, 0.5000, 0.8047,
        0.8594, 0.9063, 0.9453, 0.9531, 0.9609, 0.9688, 1.0000]
AK_V = [0.00000, 0.21738, 0.22746, 0.23503, 0.24407, 0.22924, 0.17580, 0.16987, 0.03674,
        -0.15223, -0.31117, -0.43423, -0.33511, -0.29032, -0.24095, -0.18864, 0.00000]
AK_U_MIN, AK_V_MIN, AK_V_MAX = -0.2803833, -0.4350186, 0.2466511


def centreline_errors(u_profile, v_profile):
    """Max |u - A&K| and |v - A&K| at the tables' interior points, from the run file's
    centreline profiles (y, u) and (x, v), interpolated linearly with the wall values."""
    (y, u), (x, v) = u_profile, v_profile
    u_at = np.interp(AK_Y, np.r_[0.0, y, 1.0], np.r_[0.0, u, 1.0])
    v_at = np.interp(AK_X, np.r_[0.0, x, 1.0], np.r_[0.0, v, 0.0])
    return (np.abs(u_at - AK_U)[1:-1].max(), np.abs(v_at - AK_V)[1:-1].max())


def test_cavity3d_case_writes_vector_profiles_series_and_plot(tmp_path):
    """The case file on the host at 8^3 for a few steps: the run file holds u, v, w, p and the
    velocity as one cell-centred vector (grid + (3,)), the centreline profiles, the per-step
    series with the kinetic energy, and a PNG of the mid-planes."""
    run = load_case(CASE, **{"mesh.nx": 8, "mesh.ny": 8, "mesh.nz": 8, "run.backend": "host",
                             "time.end": 0.05, "output.interval": 0.05,
                             "output.dir": str(tmp_path)})
    result = run.run()
    path = tmp_path / "cavity3d_re1000.h5"
    with h5py.File(path) as f:
        assert f["fields/velocity"].shape == (8, 8, 8, 3)
        assert {"u", "v", "w", "velocity", "p"} <= set(f["fields"])
        assert f["series/kinetic_energy"].shape == (result.steps,)
        assert f["series/kinetic_energy"][-1] > 0
        assert set(f["profiles"]) >= {"u_vertical_centreline", "v_horizontal_centreline"}
    assert (tmp_path / "cavity3d_re1000.png").stat().st_size > 0
    assert 'AttributeType="Vector"' in (tmp_path / "cavity3d_re1000.xdmf").read_text()


@pytest.mark.gpu
def test_cavity3d_re1000_centrelines_match_albensoeder_kuhlmann(tmp_path):
    """96^3 cells (the case file), to its steady state. Why 96^3: Ben Beya & Lili's
    second-order finite volumes at 64^3 are 1.1 to 1.25 % off A&K's extrema (their Table 1), so
    a second-order scheme at 96^3 should be near (64/96)^2 of that, 0.5 %. The bounds (0.015 of
    the lid speed at the table's points, 2 % on the extrema) are that expectation with room;
    they are not yet measured on this solver: tighten them once they are."""
    run = load_case(CASE, **{"run.backend": "cuda", "output.dir": str(tmp_path),
                             "output.plot": False})
    result = run.run()
    assert run.simulation.stopped == "steady state reached", result.t
    with h5py.File(tmp_path / "cavity3d_re1000.h5") as f:
        u_profile = f["profiles/u_vertical_centreline"][:].T
        v_profile = f["profiles/v_horizontal_centreline"][:].T
    u_error, v_error = centreline_errors(u_profile, v_profile)
    assert u_error < 0.015 and v_error < 0.015, (u_error, v_error)
    assert u_profile[1].min() == pytest.approx(AK_U_MIN, rel=0.02)
    assert v_profile[1].min() == pytest.approx(AK_V_MIN, rel=0.02)
    assert v_profile[1].max() == pytest.approx(AK_V_MAX, rel=0.02)
