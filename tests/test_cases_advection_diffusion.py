"""The advection-diffusion case file (cases/advection_diffusion.toml) and the command line: the
shipped case run by `solvers run`, a 1D version of it, its errors (one line naming the key) and
its velocity expressions evaluated on the faces."""

import re
from pathlib import Path

import h5py
import numpy as np
import pytest

from solvers.cases import CaseError, load
from solvers.cli import main

CASE = Path(__file__).parent.parent / "cases" / "advection_diffusion.toml"


def test_cli_runs_the_case_and_writes_c(tmp_path):
    """The shipped 2D case at 32^2: /fields/c has the grid's shape, and the total of c is that
    of the initial Gaussian, 2 pi s0^2 (the periodic box conserves it; the images the initial
    state leaves out are below 1e-21), to fp32 rounding."""
    code = main(["run", str(CASE), "--backend", "host", "--out", str(tmp_path),
                 "--set", "mesh.nx=32", "--set", "mesh.ny=32", "--quiet"])
    assert code == 0
    with h5py.File(tmp_path / "advection_diffusion.h5") as f:
        c = f["fields/c"][...]
        assert c.shape == (32, 32)
        assert f.attrs["time"] == pytest.approx(1.0)
    # The initial cell-centre samples of a smooth periodic function sum to its integral up to
    # a spectrally small error (~exp(-2 pi^2 s0^2 / dx^2) = e^-50 here); the ~130 steps add
    # fp32 rounding of ~eps sqrt(steps) ~ 1e-6 at most (measured: 1.1e-8).
    total = c.astype(np.float64).sum() / 32 ** 2
    assert total == pytest.approx(2 * np.pi * 0.05 ** 2, rel=1e-5)


def test_cli_runs_a_1d_version_of_the_case(tmp_path):
    """The case without its y extent and y sides, and with one velocity component and a 1D
    initial state given as overrides, is a 1D run: /fields/c has shape (nx,)."""
    text = "\n".join(line for line in CASE.read_text().splitlines()
                     if not re.match(r"\s*(ny|y|y_lo|y_hi)\s*=", line))
    path = tmp_path / "pulse_1d.toml"
    path.write_text(text)
    code = main(["run", str(path), "--backend", "host", "--out", str(tmp_path),
                 "--set", "mesh.nx=48", "--set", "physics.velocity=[1.0]",
                 "--set", "initial.c=exp(-(x - x0)**2 / (2 * s0**2))", "--quiet"])
    assert code == 0
    with h5py.File(tmp_path / "pulse_1d.h5") as f:
        assert f["fields/c"].shape == (48,)


@pytest.mark.parametrize("overrides, key, message", [
    ({"physics.velocity": [1.0, 0.5, 0.2]}, "physics.velocity",
     "expected [vx, vy], one component per axis of the 2D grid"),
    ({"physics.velocity": [1.0]}, "physics.velocity",
     "expected [vx, vy], one component per axis of the 2D grid"),
    ({"physics.velocity": [1.0, "z + 1"]}, "physics.velocity", "unknown name 'z'"),
    ({"physics.diffusivity": -1e-3}, "physics.diffusivity", "expected a value >= 0"),
    ({"scheme.cfl": 1.5}, "scheme.cfl", "expected a value in (0, 1], got 1.5"),
    ({"boundary.x_hi": "outflow"}, "boundary", "periodic must be set on both x_lo and x_hi"),
    ({"boundary.x_hi": "inflow"}, "boundary.x_hi", "expected one of periodic, outflow, wall"),
])
def test_case_errors_are_one_line_naming_the_key(overrides, key, message):
    with pytest.raises(CaseError) as error:
        load(CASE, overrides)
    text = str(error.value)
    assert "\n" not in text and message in text, text
    section, _, name = key.partition(".")
    assert f"[{section}]" in text or f"--set {key}" in text, text
    assert not name or name in text, text


def test_case_velocity_expressions_are_evaluated_on_the_faces():
    """Expressions of x, y (and the [initial] constants) give each face its velocity at the
    face centre; numbers give every face the number."""
    case = load(CASE, {"physics.velocity": ["x0 + sin(2 * pi * y)", 0.25],
                       "mesh.nx": 8, "mesh.ny": 4})
    solver = case.adapter.build(case)
    ax, ay = solver.face_velocity
    grid = solver.grid
    expected = 0.5 + np.sin(2 * np.pi * grid.y_centres())
    np.testing.assert_allclose(ax, np.broadcast_to(expected, (grid.nx + 1, grid.ny)))
    np.testing.assert_array_equal(ay, np.full((grid.nx, grid.ny + 1), 0.25))
