"""The force the immersed boundary records every step (the forcing's momentum sum,
raw_kernels/fv/immersed.cu) against independent ones: a momentum balance on boxes around the
body from the steady fields, and its volume form weighted over annuli around the body
(solvers/fv/incompressible/control_volume.py)."""

import functools

import numpy as np
import pytest

from solvers.fv.incompressible.control_volume import (
    box_force,
    box_lines,
    solver_box_force,
    weighted_force,
)
from solvers.fv.incompressible.solver import IncompressibleSolver
from solvers.mesh import StructuredGrid
from solvers.run.simulation import Simulation

CHANNEL = {"x_lo": {"inflow": 1.0}, "x_hi": "outflow", "y_lo": "slip", "y_hi": "slip"}


def test_box_force_of_simple_fields():
    """A uniform pressure, a uniform flow and the linear shear u = y (nu = 1: the stress 1 pushes
    +x on the top side and -x on the bottom) exert no net force on a box; the pressure p = x
    pushes what the box holds towards -x with its area."""
    grid = StructuredGrid(10, x=(0, 1), ny=10, y=(0, 1))
    _, y_of_u = np.meshgrid(grid.x_nodes(), grid.y_centres(), indexing="ij")
    x_of_p, _ = grid.centres()
    v, box = np.zeros((10, 11)), (0.2, 0.8, 0.3, 0.7)
    for u, p in ((np.ones((11, 10)), np.full((10, 10), 3.0)), (y_of_u, np.zeros((10, 10)))):
        assert np.allclose(box_force(grid, u, v, p, 1.0, box), 0, atol=1e-12)
    assert np.allclose(box_force(grid, np.zeros((11, 10)), v, x_of_p, 1.0, box),
                       (-0.6 * 0.4, 0), atol=1e-12)
    with pytest.raises(ValueError, match="a cell inside"):
        box_lines(grid, (0.0, 0.5, 0.3, 0.7))


def test_weighted_force_of_simple_fields():
    """The same fields weighted over the annulus 0.2 < r < 0.35 around (0.5, 0.5): no force from
    the uniform ones or the linear shear; p = x pushes towards -x with the weight's integral,
    2 pi (r1^2 / 2 + L r1 / 2 + 0.15 L^2) for the smoothstep from r1 over L = r2 - r1."""
    grid = StructuredGrid(200, x=(0, 1), ny=200, y=(0, 1))
    _, y_of_u = np.meshgrid(grid.x_nodes(), grid.y_centres(), indexing="ij")
    x_of_p, _ = grid.centres()
    v, zero_p = np.zeros((200, 201)), np.zeros((200, 200))
    force = functools.partial(weighted_force, grid, nu=1.0, centre=(0.5, 0.5), r1=0.2, r2=0.35)
    for u, p in ((np.ones((201, 200)), np.full((200, 200), 3.0)), (y_of_u, zero_p)):
        assert np.allclose(force(u, v, p), 0, atol=1e-12)
    weight = 2 * np.pi * (0.2**2 / 2 + 0.15 * 0.2 / 2 + 0.15 * 0.15**2)
    assert force(np.zeros((201, 200)), v, x_of_p) == pytest.approx((-weight, 0), abs=2e-4)


@pytest.mark.parametrize("precision", ["fp64", "fp32"])
def test_recorded_force_equals_the_box_balance_of_a_steady_flow(precision):
    """A cylinder (D = 0.4, 6.4 cells across) 0.05 below the centre of a slip-walled channel
    [0, 3] x [0, 1], 48 x 16 cells, Re = 8, run to its steady state: the recorded drag and lift
    coefficients agree with the box balances (measured, fp64: Cd 9.6253 recorded against
    9.6010 and 9.6082 on the two boxes, Cl 0.5155 against 0.4898 and 0.5091; what the boxes
    differ by is the balance's own discretisation error on this coarse grid: with two image
    points on 96 x 32 cells Cl 0.6786 recorded, 0.6727 to 0.6769 on boxes 0.5 to 0.7 high).
    The pressure solve's floor is set low: the forced faces hold their targets, so at a
    steady state the solve starts below a floor of 1e-6 and does nothing, and the velocity
    drifts by what it leaves (measured: a change rate of 3e-5 with the default floor)."""
    grid = StructuredGrid(48, x=(0, 3), ny=16, y=(0, 1))
    solver = IncompressibleSolver(
        grid, CHANNEL, nu=0.05, backend="host", precision=precision, reference_length=0.4,
        obstacle_distance=lambda x, y: np.hypot(x - 1.0, y - 0.45) - 0.2,
        steady_tolerance=1e-5, pressure_divergence=1e-8)
    u, v = solver.face_velocities()
    solver.set_state(np.ones_like(u), v)
    # Run to the steady state (the change rate below 1e-5 per unit time).
    simulation = Simulation(solver, 1e9, steps_per_graph=50)
    for _ in range(60):
        simulation.step(50)
        if solver.observe():
            break
    assert solver.series["change_rate"][-1] < 1e-5
    drag, lift = solver.coefficients()
    scale = 2 / (1.0**2 * 0.4)
    # Boxes 0.6 and 0.8 high around the body, reaching 0.3 further downstream.
    for half in (0.3, 0.4):
        fx, fy = scale * solver_box_force(solver, (1 - half, 1.3 + half, 0.45 - half,
                                                   0.45 + half))
        assert drag[-1] == pytest.approx(fx, rel=0.005)
        assert lift[-1] == pytest.approx(fy, rel=0.06)
    # Annuli 2-3 cells wide here: their own discretisation error (measured, fp64: Cd 9.637 to
    # 9.727, Cl 0.495 to 0.556; at 39 cells a diameter they agree to 2%, immersed_lift.md).
    u, v = solver.face_velocities()
    for r1, r2 in ((0.26, 0.4), (0.28, 0.44), (0.3, 0.44)):
        fx, fy = scale * weighted_force(grid, u, v, solver.pressure_field(), solver.nu,
                                        (1.0, 0.45), r1, r2)
        assert drag[-1] == pytest.approx(fx, rel=0.015)
        assert lift[-1] == pytest.approx(fy, rel=0.1)
