"""The fused elasticity form (raw_kernels/fe/assemble.cu) against an independent B-matrix
assembly (solvers/verification/fe_elasticity_independent.py) for P1/P2 on triangles (plane
strain and plane stress) and tetrahedra with per-material E and nu; symmetric to the last bit
and the same bits every run; the solver's solution, with a body force, tractions and a roller,
against spsolve of the independent system."""

import numpy as np
import pytest
import scipy.sparse.linalg as spla
from test_fe_assembly import TOL32, TOL64, distorted, relative

from solvers.fe.assembly import Assembler, cells, sync_host
from solvers.fe.boundary import Dirichlet, Neumann
from solvers.fe.elasticity import ElasticitySolver, lame_parameters
from solvers.fe.space import FunctionSpace
from solvers.mesh.generators import box, rectangle
from solvers.verification.fe_elasticity_independent import plane_lame, stiffness_matrices
from solvers.verification.fe_independent import assemble, element_matrices

CASES = [("tri", "strain"), ("tri", "stress"), ("tet", None)]


def mesh_with_materials(cell):
    """A distorted mesh whose cells with centre x < 1/2 are material 'soft', the rest 'hard'."""
    mesh = distorted(rectangle, 5, 4) if cell == "tri" else distorted(box, 3, 2, 3)
    left = mesh.points[mesh.cells].mean(axis=1)[:, 0] < 0.5
    mesh.materials = {"soft": np.flatnonzero(left), "hard": np.flatnonzero(~left)}
    return mesh, left


MATERIALS = {"young": {"soft": 1.0, "hard": 7.0}, "poisson": {"soft": 0.2, "hard": 0.45}}


def per_cell(left, key):
    return np.where(left, MATERIALS[key]["soft"], MATERIALS[key]["hard"])


@pytest.mark.parametrize("degree", [1, 2])
@pytest.mark.parametrize("cell, plane", CASES)
@pytest.mark.parametrize("precision", ["fp64", "fp32"])
def test_stiffness_equals_the_independent_b_matrix_assembly(backend_name, precision, cell,
                                                             plane, degree):
    mesh, left = mesh_with_materials(cell)
    space = FunctionSpace(mesh, degree, mesh.dim)
    a = Assembler(space, backend_name, precision)
    young, poisson = per_cell(left, "young"), per_cell(left, "poisson")
    matrix = a.matrix()
    form = a.bilinear("elasticity", cells(space),
                      np.stack(lame_parameters(young, poisson, plane), axis=1))
    form.bind(matrix.values)()
    sync_host(matrix)
    got = matrix.to_scipy()
    local = stiffness_matrices(mesh.points, mesh.cells, degree,
                               *plane_lame(young, poisson, plane))
    expected = assemble(space.n, space.cell_dofs, local).toarray()
    assert relative(got.toarray(), expected) < (TOL64 if precision == "fp64" else TOL32)
    # Bit symmetry: each pair of entries is computed by one expression (fe/assemble.cu).
    assert (got != got.T).nnz == 0


def test_two_assemblies_give_identical_bits(backend_name):
    mesh, left = mesh_with_materials("tet")
    space = FunctionSpace(mesh, 2, 3)
    a = Assembler(space, backend_name, "fp32")
    form = a.bilinear("elasticity", cells(space), np.stack(
        lame_parameters(per_cell(left, "young"), per_cell(left, "poisson")), axis=1))
    first, second = a.values(), a.values()
    form.bind(first)()
    form.bind(second)()
    host = a.backend.to_host
    assert np.array_equal(host(first).view(np.int32), host(second).view(np.int32))


def test_elasticity_form_needs_a_vector_space_on_cells():
    space = FunctionSpace(rectangle(2, 2), 1)
    with pytest.raises(ValueError, match="elasticity form needs a vector space"):
        Assembler(space, "host", "fp64").bilinear("elasticity", cells(space), (1.0, 1.0))


def body_force(*x):
    return [np.sin(2 * x[0]) + x[1], np.cos(x[1] * x[0])] + ([x[2]] if len(x) == 4 else [])


@pytest.mark.parametrize("degree", [1, 2])
@pytest.mark.parametrize("cell, plane", CASES)
def test_solution_equals_spsolve_of_the_independent_system(backend_name, cell, plane, degree):
    """Clamped left side with a prescribed displacement, a roller (normal component only) on
    the bottom, tractions on the right and top, a body force, two materials; fp64."""
    mesh, left = mesh_with_materials(cell)
    dim = mesh.dim
    normal = dim - 1  # the bottom's normal: y in 2D, z in 3D
    # Zero on the bottom, so that the clamp and the roller agree where they meet.
    clamp = tuple(lambda *x, c=c: 0.1 * (c + 1) * x[normal] for c in range(dim))
    pull = (lambda *x: 1 + x[1], *(0.5,) * (dim - 1))
    push = (0.3,) * dim
    force = tuple(lambda *x, c=c: body_force(*x)[c] for c in range(dim))
    boundary = {"left": Dirichlet(clamp), "bottom": Dirichlet(0.0, (normal,)),
                "right": Neumann(pull), "top": Neumann(push)}
    solver = ElasticitySolver(mesh, degree, plane=plane, body_force=force, boundary=boundary,
                              preconditioner="jacobi", rtol=1e-12, backend=backend_name,
                              precision="fp64", **MATERIALS)
    u, info = solver.solve()
    assert info.converged

    # The independent system: B-matrix stiffness, loads as mass matrices times nodal values.
    space = solver.space
    nodes = space.node_points
    young, poisson = per_cell(left, "young"), per_cell(left, "poisson")
    K = assemble(space.n, space.cell_dofs, stiffness_matrices(
        mesh.points, mesh.cells, degree, *plane_lame(young, poisson, plane)))

    def nodal(values):
        return np.stack([np.broadcast_to(v(*nodes.T, 0.0) if callable(v) else v,
                                         (len(nodes),)) for v in values], axis=1).ravel()

    ones = np.ones(mesh.ncells)
    M = assemble(space.n, space.cell_dofs,
                 element_matrices(mesh.points, mesh.cells, degree, ones, "mass"), dim)
    b = M @ nodal(force)
    for name, traction in (("right", pull), ("top", push)):
        facets = mesh.boundaries[name]
        Mf = assemble(space.n, space.node_dofs(space.facet_nodes(facets)),
                      element_matrices(mesh.points, facets, degree, np.ones(len(facets)),
                                       "mass"), dim)
        b += Mf @ nodal(traction)
    expected = np.zeros(space.n)
    left_nodes = space.boundary_nodes(["left"])
    bottom_nodes = np.setdiff1d(space.boundary_nodes(["bottom"]), left_nodes)
    fixed = np.concatenate([(left_nodes[:, None] * dim + np.arange(dim)).ravel(),
                            bottom_nodes * dim + normal])
    expected[fixed] = nodal(clamp)[fixed]  # 0 on the roller
    free = np.setdiff1d(np.arange(space.n), fixed)
    rhs = b[free] - K[free][:, fixed] @ expected[fixed]
    expected[free] = spla.spsolve(K[free][:, free].tocsc(), rhs)
    # CG to 1e-12 relative residual; the condition number (~1e4 with E varying 7x and nu up
    # to 0.45) leaves about 1e-8 relative error.
    assert relative(u, expected) < 1e-7
