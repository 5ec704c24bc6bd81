"""The unfused array version of the Euler scheme (solvers/verification/euler_unfused.py), the
benchmark's baseline, against the fused solver on the host backend: the same operations in the
same order, so the same numbers to rounding. In fp64 the differences (~1e-16 relative) come from
the C++ compiler contracting a * b + c into FMAs in the fused kernel; 4 steps keep them far below
1e-12."""

import numpy as np
import pytest

from solvers.fv.euler import EulerSolver
from solvers.mesh.structured import StructuredGrid
from solvers.verification.euler_unfused import UnfusedEuler

GAMMA = 1.4


def random_state(rng, nx, ny, mean_velocity):
    """Conserved variables (4, ny, nx) of a random, physical, non-smooth state."""
    rho = rng.uniform(0.5, 1.5, (ny, nx))
    vx = mean_velocity[0] + rng.uniform(-0.5, 0.5, (ny, nx))
    vy = mean_velocity[1] + rng.uniform(-0.5, 0.5, (ny, nx))
    p = rng.uniform(0.5, 1.5, (ny, nx))
    energy = p / (GAMMA - 1) + 0.5 * rho * (vx**2 + vy**2)
    return np.stack([rho, rho * vx, rho * vy, energy])


def run_both(u, nx, ny, boundary, precision, steps, backend="host", xp=np):
    grid = StructuredGrid(nx, (0.0, 1.0), ny, (0.0, 0.7))
    kinds = {"x_lo": boundary[0], "x_hi": boundary[0], "y_lo": boundary[1], "y_hi": boundary[1]}
    fused = EulerSolver(grid, kinds, gamma=GAMMA, cfl=0.5, backend=backend, precision=precision)
    # The solver takes (nvar, nx, ny) indexed [i, j]; the array layout is (nvar, ny, nx).
    fused.set_conserved(u.transpose(0, 2, 1))
    fused.clock.set(t_stop=1e30)  # with t_stop = 0 a step does nothing
    dtype = "float64" if precision == "fp64" else "float32"
    unfused = UnfusedEuler(xp, nx, ny, grid.dx, grid.dy, gamma=GAMMA, cfl=0.5, dtype=dtype,
                           boundary=boundary)
    unfused.set_conserved(xp.asarray(u))
    for _ in range(steps):
        fused.step()
        unfused.step()
    clock = fused.clock.read()
    assert clock.steps == steps and not clock.diverged
    assert clock.t == pytest.approx(float(unfused.t), rel=1e-12 if precision == "fp64" else 1e-5)
    result = unfused.u.get() if xp is not np else unfused.u
    return fused.conserved().transpose(0, 2, 1), result.astype(np.float64)


@pytest.mark.parametrize("boundary", [("periodic", "periodic"), ("transmissive", "reflective"),
                                      ("reflective", "periodic")])
# (0, 0): subsonic, the star regions of HLLC; (3, -3): supersonic, the upwind fluxes.
@pytest.mark.parametrize("mean_velocity", [(0.0, 0.0), (3.0, -3.0)])
def test_unfused_matches_fused_fp64(boundary, mean_velocity):
    rng = np.random.default_rng()
    nx, ny = 24, 17  # unequal, so a swapped axis shows
    u = random_state(rng, nx, ny, mean_velocity)
    fused, unfused = run_both(u, nx, ny, boundary, "fp64", steps=4)
    assert np.all(np.isfinite(unfused))
    assert np.abs(fused - u).max() > 1e-3  # the state did move
    error = np.abs(unfused - fused).max() / np.abs(fused).max()
    assert error < 1e-12, error


def test_unfused_matches_fused_fp32():
    rng = np.random.default_rng()
    nx, ny = 32, 20
    u = random_state(rng, nx, ny, (0.3, -0.2))
    fused, unfused = run_both(u, nx, ny, ("periodic", "periodic"), "fp32", steps=4)
    # fp32 rounding (1e-7 per operation) grown over a few hundred operations and 12 stages.
    error = np.linalg.norm(unfused - fused) / np.linalg.norm(fused)
    assert error < 1e-5, error


def test_unfused_conserves_mass_momentum_energy():
    """An independent check of the baseline itself: periodic, so the totals stay put."""
    nx, ny = 20, 12
    solver = UnfusedEuler(np, nx, ny, 0.05, 0.05, dtype="float64")
    u = random_state(np.random.default_rng(), nx, ny, (0.5, -0.5))
    solver.set_conserved(u)
    for _ in range(5):
        solver.step()
    assert np.abs(solver.u - u).max() > 1e-3
    totals, start = solver.u.sum(axis=(1, 2)), u.sum(axis=(1, 2))
    assert np.abs(totals - start).max() < 1e-12 * np.abs(start).max()


@pytest.mark.gpu
def test_unfused_cupy_matches_fused_cuda():
    """The benchmark's pair on the GPU: unfused CuPy against the fused kernels."""
    import cupy

    rng = np.random.default_rng()
    nx, ny = 40, 24
    u = random_state(rng, nx, ny, (0.5, 0.5))
    fused, unfused = run_both(u, nx, ny, ("periodic", "periodic"), "fp64", steps=3,
                              backend="cuda", xp=cupy)
    # NVRTC contracts a * b + c into FMAs in the fused kernel: rounding differs, ~1e-15.
    error = np.abs(unfused - fused).max() / np.abs(fused).max()
    assert error < 1e-11, error
