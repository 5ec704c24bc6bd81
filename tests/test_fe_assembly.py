"""Fused finite-element assembly against an independent NumPy/SciPy assembly
(solvers/verification/fe_independent.py): stiffness and mass matrices and load vectors for
P1/P2 on triangles and tetrahedra, scalar and vector; the same bits on every run; the Poisson
solution against spsolve of the independent system."""

import numpy as np
import pytest
import scipy.sparse.linalg as spla

from solvers.backend import get_backend
from solvers.fe.assembly import Assembler, cells, sync_host
from solvers.fe.boundary import Dirichlet, dirichlet_values
from solvers.fe.poisson import PoissonSolver
from solvers.fe.space import FunctionSpace
from solvers.mesh.generators import box, rectangle
from solvers.verification.fe_independent import assemble, element_matrices

# fp64 kernels against an fp64 reference: both sum the same exact element entries in other
# orders, so they agree to a few ulps of the largest entry.
TOL64 = 1e-12
# fp32: coordinates, Jacobians and sums rounded in float (about 1e-7 relative each, a few dozen
# operations per entry).
TOL32 = 2e-5


def distorted(mesh_fn, *args, seed=0):
    """A structured mesh with interior nodes moved randomly (cells stay valid)."""
    mesh = mesh_fn(*args)
    rng = np.random.default_rng(seed)
    boundary = np.unique(np.concatenate([f.ravel() for f in mesh.boundaries.values()]))
    h = 1.0 / max(args)
    move = rng.uniform(-0.15 * h, 0.15 * h, mesh.points.shape)
    move[boundary] = 0
    return type(mesh)(mesh.points + move, mesh.cells, mesh.boundaries, source="distorted")


MESHES = {"tri": lambda: distorted(rectangle, 5, 4),
          "tet": lambda: distorted(box, 3, 2, 3)}


def relative(a, b):
    return abs(a - b).max() / abs(b).max()


@pytest.mark.parametrize("components", [1, "vector"])
@pytest.mark.parametrize("form", ["stiffness", "mass"])
@pytest.mark.parametrize("degree", [1, 2])
@pytest.mark.parametrize("cell", sorted(MESHES))
@pytest.mark.parametrize("precision", ["fp64", "fp32"])
def test_matrices_equal_the_independent_assembly(backend_name, precision, cell, degree, form,
                                                 components):
    mesh = MESHES[cell]()
    space = FunctionSpace(mesh, degree, mesh.dim if components == "vector" else 1)
    a = Assembler(space, backend_name, precision)
    coef = np.random.default_rng(1).uniform(0.5, 2.0, mesh.ncells)
    matrix = a.matrix()
    a.bilinear(form, cells(space), coef).bind(matrix.values)()
    sync_host(matrix)
    local = element_matrices(mesh.points, mesh.cells, degree, coef, form)
    expected = assemble(space.n, space.cell_dofs, local, space.components)
    got = matrix.to_scipy()
    assert (got != 0).nnz > 0 and got.shape == expected.shape
    assert relative(got.toarray(), expected.toarray()) < (TOL64 if precision == "fp64"
                                                          else TOL32)


@pytest.mark.parametrize("degree", [1, 2])
@pytest.mark.parametrize("cell", sorted(MESHES))
def test_load_vector_is_the_mass_matrix_times_nodal_values(backend_name, cell, degree):
    mesh = MESHES[cell]()
    space = FunctionSpace(mesh, degree)
    a = Assembler(space, backend_name, "fp64")
    coef = np.random.default_rng(2).uniform(0.5, 2.0, mesh.ncells)
    f = np.cos(space.node_points.sum(axis=1))
    b = a.vector()
    a.linear(cells(space), coef).bind(a.device(f, np.float64), b)()
    local = element_matrices(mesh.points, mesh.cells, degree, coef, "mass")
    expected = assemble(space.n, space.cell_dofs, local) @ f
    assert relative(a.backend.to_host(b), expected) < TOL64


def test_two_assemblies_give_identical_bits(backend_name):
    mesh = distorted(box, 4, 3, 3)
    space = FunctionSpace(mesh, 2)
    a = Assembler(space, backend_name, "fp32")
    form = a.bilinear("stiffness", cells(space), np.linspace(1, 3, mesh.ncells))
    first, second = a.values(), a.values()
    form.bind(first)()
    form.bind(second)()
    backend = get_backend(backend_name)
    assert np.array_equal(backend.to_host(first).view(np.int32),
                          backend.to_host(second).view(np.int32))


@pytest.mark.parametrize("degree", [1, 2])
@pytest.mark.parametrize("cell", sorted(MESHES))
def test_poisson_solution_equals_spsolve_of_the_independent_system(backend_name, cell, degree):
    mesh = MESHES[cell]()
    conductivity = np.where(mesh.points[mesh.cells].mean(axis=1)[:, 0] < 0.5, 1.0, 5.0)
    mesh.materials = {"right": np.flatnonzero(conductivity == 5.0)}
    walls = ["left", "right"]
    g = (lambda x, y, t: 1 + x * y) if mesh.dim == 2 else (lambda x, y, z, t: 1 + x * y * z)

    def f(*x):
        return np.sin(3 * x[0]) + x[1]

    solver = PoissonSolver(mesh, degree, conductivity={"right": 5.0}, source=f,
                           boundary={w: Dirichlet(g) for w in walls}, preconditioner="jacobi",
                           rtol=1e-12, backend=backend_name, precision="fp64")
    u, info = solver.solve()
    assert info.converged

    space = solver.space
    K = assemble(space.n, space.cell_dofs,
                 element_matrices(mesh.points, mesh.cells, degree, conductivity, "stiffness"))
    M = assemble(space.n, space.cell_dofs,
                 element_matrices(mesh.points, mesh.cells, degree, np.ones(mesh.ncells), "mass"))
    b = M @ f(*space.node_points.T, 0.0)
    fixed = np.unique(space.facet_nodes(np.concatenate([mesh.boundaries[w] for w in walls])))
    free = np.setdiff1d(np.arange(space.n), fixed)
    expected = np.zeros(space.n)
    expected[fixed] = g(*space.node_points[fixed].T, 0.0)
    rhs = b[free] - K[free][:, fixed] @ expected[fixed]
    expected[free] = spla.spsolve(K[free][:, free].tocsc(), rhs)
    # CG to 1e-12 relative residual on a matrix of condition ~1e3: about 1e-9 relative error.
    assert relative(u, expected) < 1e-8


def test_assembly_replays_from_a_captured_graph(backend_name):
    """The form and load launches allocate nothing and read nothing back (the backend
    refuses both while capturing), and a replay gives the eager bits."""
    mesh = distorted(rectangle, 6, 5)
    space = FunctionSpace(mesh, 2)
    a = Assembler(space, backend_name, "fp32")
    values, b = a.values(), a.vector()
    f = a.device(np.sin(space.node_points[:, 0]), np.float32)
    launches = [a.bilinear("stiffness", cells(space), 2.0).bind(values),
                a.linear(cells(space)).bind(f, b)]
    for launch in launches:
        launch()
    eager = [a.backend.to_host(values), a.backend.to_host(b)]
    a.backend.fill(values, 0)
    a.backend.fill(b, 0)
    graph = a.backend.capture(lambda: [launch() for launch in launches])
    graph.replay()
    a.backend.synchronize()
    assert np.array_equal(a.backend.to_host(values), eager[0])
    assert np.array_equal(a.backend.to_host(b), eager[1])


def test_vector_dirichlet_constrains_the_named_components():
    mesh = rectangle(3, 2)
    space = FunctionSpace(mesh, 1, 2)
    dofs, values = dirichlet_values(space, {"left": Dirichlet((0.0, 1.5), None),
                                            "bottom": Dirichlet(2.0, (1,))})
    left = space.boundary_nodes(["left"])
    bottom = space.boundary_nodes(["bottom"])
    expected = np.union1d(np.concatenate([2 * left, 2 * left + 1]), 2 * bottom + 1)
    np.testing.assert_array_equal(dofs, expected)
    np.testing.assert_array_equal(values[2 * bottom + 1], 2.0)  # bottom is named later
    only_left = np.setdiff1d(left, bottom)
    np.testing.assert_array_equal(values[2 * only_left + 1], 1.5)
