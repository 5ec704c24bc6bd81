"""Lagrange shape functions on the reference simplex as polynomials in barycentric
coordinates, and the reference tensors of the forms, integrated exactly.

On an affine simplex K with barycentric coordinates lambda_0..lambda_d (gradients G_a, measure
|K|), every element matrix the kernels need factors into geometry and a constant tensor:

    mass       M_ij   = |K| * Mref[i, j],          Mref[i, j]     = (1/|K|) int phi_i phi_j
    stiffness  K_ij   = |K| * sum_ab (G_a . G_b) * Sref[i, j, a, b],
                                                    Sref[i,j,a,b] = (1/|K|) int dphi_i/dlambda_a
                                                                               dphi_j/dlambda_b
    elasticity uses Eref = Sref before symmetrisation: dphi_i/dx_p dphi_j/dx_q needs the
                                                    order of (a, b) (fe/assemble.cu)

The integrals are exact: int_K lambda^alpha = |K| d! alpha! / (|alpha| + d)!. So the kernels
compute no quadrature loop at all (the reference tensors play the part of an exact quadrature
done once on the host), only Jacobians, measures and the sums above.

Node order on a simplex with d + 1 vertices: the vertices, then (P2) the edges of
topology.LOCAL_EDGES.
"""

from functools import cache
from itertools import product
from math import factorial

import numpy as np

from ..mesh.topology import LOCAL_EDGES

EDGES = {2: ((0, 1),), **LOCAL_EDGES}  # a segment's one edge, then triangles and tetrahedra


def _monomial(nvertices, powers):
    exponent = [0] * nvertices
    for vertex in powers:
        exponent[vertex] += 1
    return tuple(exponent)


@cache
def shape_functions(nvertices, degree):
    """[{exponent tuple: coefficient}] of the P1 or P2 basis on a simplex of nvertices."""
    if degree == 1:
        return tuple({_monomial(nvertices, [a]): 1.0} for a in range(nvertices))
    if degree != 2:
        raise ValueError(f"degree must be 1 or 2, got {degree}")
    vertex = [{_monomial(nvertices, [a, a]): 2.0, _monomial(nvertices, [a]): -1.0}
              for a in range(nvertices)]
    edge = [{_monomial(nvertices, [a, b]): 4.0} for a, b in EDGES[nvertices]]
    return tuple(vertex + edge)


def _derivative(poly, a):
    out = {}
    for exponent, coef in poly.items():
        if exponent[a]:
            lowered = list(exponent)
            lowered[a] -= 1
            out[tuple(lowered)] = out.get(tuple(lowered), 0.0) + coef * exponent[a]
    return out


def _mean(poly_a, poly_b):
    """(1/|K|) int_K poly_a poly_b, exactly."""
    total = 0.0
    for (ea, ca), (eb, cb) in product(poly_a.items(), poly_b.items()):
        exponent = [x + y for x, y in zip(ea, eb)]
        d = len(exponent) - 1
        weight = factorial(d) * np.prod([factorial(x) for x in exponent])
        total += ca * cb * weight / factorial(sum(exponent) + d)
    return total


@cache
def mass_reference(nvertices, degree):
    """Mref (nloc, nloc), float64, exactly symmetric."""
    phi = shape_functions(nvertices, degree)
    mass = np.array([[_mean(p, q) for q in phi] for p in phi])
    return (mass + mass.T) / 2


@cache
def elasticity_reference(nvertices, degree):
    """Eref (nloc, nloc, nvertices, nvertices), float64: (1/|K|) int dphi_i/dlambda_a
    dphi_j/dlambda_b, not symmetrised."""
    phi = shape_functions(nvertices, degree)
    grads = [[_derivative(p, a) for a in range(nvertices)] for p in phi]
    n = len(phi)
    out = np.zeros((n, n, nvertices, nvertices))
    for i, j, a, b in product(range(n), range(n), range(nvertices), range(nvertices)):
        out[i, j, a, b] = _mean(grads[i][a], grads[j][b])
    return out


@cache
def stiffness_reference(nvertices, degree):
    """Sref (nloc, nloc, nvertices, nvertices), float64."""
    out = elasticity_reference(nvertices, degree)
    # Exactly symmetric in (a, b) and in (i, j), so the kernel computes K_ij and K_ji from the
    # same numbers in the same order: the assembled matrix is symmetric to the last bit (CG
    # and AMG's symmetry check need it), whatever the precision.
    out = (out + out.transpose(0, 1, 3, 2)) / 2
    return (out + out.transpose(1, 0, 2, 3)) / 2


def vertex_derivatives(nvertices, degree):
    """D (nvertices, nloc, nvertices): D[v, i, a] = dphi_i/dlambda_a at vertex v (where
    lambda = e_v), so grad phi_i at v is sum_a D[v, i, a] G_a (stresses at vertices)."""
    out = np.zeros((nvertices, nodes_per_cell(nvertices, degree), nvertices))
    for v, (i, poly), a in product(range(nvertices),
                                   enumerate(shape_functions(nvertices, degree)),
                                   range(nvertices)):
        out[v, i, a] = sum(coef for exponent, coef in _derivative(poly, a).items()
                           if all(x == 0 for k, x in enumerate(exponent) if k != v))
    return out


def nodes_per_cell(nvertices, degree):
    return len(shape_functions(nvertices, degree))
