"""Geometric multigrid's V-cycle (raw_kernels/linalg/multigrid.cu) against an independent
NumPy/SciPy V-cycle rebuilt from its documented definition: explicit sparse P, R and A per
level, the Chebyshev smoother in Saad's residual form (not the kernels' three-term form)."""

import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from solvers.linalg.multigrid import GeometricMultigrid
from solvers.linalg.stencil import SIDES, StencilLaplacian

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_linalg_multigrid import (  # noqa: E402
    MIXED_2D,
    MIXED_3D,
    Preconditioner,
    laplacian,
    random_vector,
    rough_coefficient,
    smooth_coefficient,
)


def prolongation_1d(nc, sign_lo, sign_hi):
    """Cell-centred linear interpolation from nc to 2 nc cells: 3/4 own, 1/4 neighbour; the
    ghost beyond a boundary is sign * own (sign -1 Dirichlet, +1 Neumann)."""
    P = sp.lil_matrix((2 * nc, nc))
    for c in range(nc):
        P[2 * c, c] += 0.75
        P[2 * c + 1, c] += 0.75
        if c > 0:
            P[2 * c, c - 1] += 0.25
        else:
            P[2 * c, c] += 0.25 * sign_lo
        if c < nc - 1:
            P[2 * c + 1, c + 1] += 0.25
        else:
            P[2 * c + 1, c] += 0.25 * sign_hi
    return P.tocsr()


def prolongation(coarse_shape, boundary):
    """The tensor product in the unknown order i + nx (j + ny k) (x fastest)."""
    P = sp.identity(1, format="csr")
    for axis, nc in enumerate(coarse_shape):
        signs = [-1 if boundary[SIDES[2 * axis + end]] == "dirichlet" else 1 for end in (0, 1)]
        P = sp.kron(prolongation_1d(nc, *signs), P, format="csr")
    return P


def chebyshev(A, inv_diag, b, x, lower, upper, degree):
    """Saad's algorithm 12.1 with Jacobi preconditioning, in float64."""
    theta, delta = (upper + lower) / 2, (upper - lower) / 2
    sigma = theta / delta
    rho = 1 / sigma
    r = b - A @ x
    d = inv_diag * r / theta
    for _ in range(degree):
        x = x + d
        r = r - A @ d
        rho_next = 1 / (2 * sigma - rho)
        d = rho_next * rho * d + 2 * rho_next / delta * inv_diag * r
        rho = rho_next
    return x


class ReferenceCycle:
    """The V-cycle of solvers/linalg/multigrid.py rebuilt from its documented definition."""

    def __init__(self, op, mg, smoother, sweeps, omega=None):
        ndim = len(op.shape)
        shape, coefficient = op.shape, op.coefficient
        self.A, self.P = [op.to_scipy()], []
        for level in range(1, mg.levels):
            shape = tuple(n // 2 for n in shape)
            if isinstance(coefficient, np.ndarray):  # arithmetic mean of the 2^d children
                coefficient = coefficient.reshape(
                    [m for n in shape for m in (n, 2)]).mean(axis=tuple(range(1, 2 * ndim, 2)))
            coarse = StencilLaplacian(shape, [h * 2**level for h in op.spacing], coefficient,
                                      op.boundary, backend="host")
            self.A.append(coarse.to_scipy())
            self.P.append(prolongation(shape, op.boundary))
        self.inv_diag = [1 / A.diagonal() for A in self.A]
        self.restrict_scale = 2.0**-ndim
        self.smoother, self.sweeps = smoother, sweeps
        self.omega = omega if omega is not None else {2: 0.8, 3: 6 / 7}[ndim]
        self.coarse = (*mg.coarse_interval, mg.coarse_sweeps)

    def smooth(self, level, b, x):
        A, inv_diag = self.A[level], self.inv_diag[level]
        if self.smoother == "jacobi":
            for _ in range(self.sweeps):
                x = x + self.omega * inv_diag * (b - A @ x)
            return x
        return chebyshev(A, inv_diag, b, x, 2 / (4 * self.sweeps), 2.0, self.sweeps)

    def __call__(self, b, level=0):
        if level == len(self.A) - 1:
            return chebyshev(self.A[level], self.inv_diag[level], b, np.zeros_like(b),
                             *self.coarse)
        x = self.smooth(level, b, np.zeros_like(b))
        coarse_b = self.restrict_scale * (self.P[level].T @ (b - self.A[level] @ x))
        x = x + self.P[level] @ self(coarse_b, level + 1)
        return self.smooth(level, b, x)


# (shape, coefficient, boundary, GeometricMultigrid options). Shapes are not multiples of the
# restriction tiles (16 x 16, 8 x 8 x 4) or of the 32 x 8 pointwise blocks; (66, 66) has a
# coarsest grid of 33 x 33 > 1024 cells, solved by one launch per Chebyshev step.
REFERENCE_CASES = {
    "2d": ((40, 24), None, None, {}),
    "2d_variable_mixed": ((48, 80), "rough", MIXED_2D, {}),
    "2d_jacobi_3": ((40, 24), "smooth", MIXED_2D, {"smoother": "jacobi", "sweeps": 3}),
    "2d_chebyshev_1_levels_2": ((64, 64), 2.5, None, {"sweeps": 1, "levels": 2}),
    "2d_big_coarsest": ((66, 66), None, MIXED_2D, {}),
    "3d": ((24, 16, 40), None, None, {}),
    "3d_variable_mixed": ((16, 24, 16), "rough", MIXED_3D, {"sweeps": 3}),
    "3d_jacobi": ((16, 16, 8), "smooth", MIXED_3D, {"smoother": "jacobi", "omega": 0.7}),
}
# Kernel against reference, max |z - z_ref| / max |z_ref|: measured up to 6e-15 (fp64) and
# 2e-7 (fp32) on the host, a few rounding units of each level's few dozen operations per
# value; the margin covers the GPU's approximate fp32 division (2 ulp instead of 0.5).
REFERENCE_TOL = {"fp64": 1e-13, "fp32": 5e-6}


@pytest.mark.parametrize("precision", ["fp64", "fp32"])
@pytest.mark.parametrize("case", sorted(REFERENCE_CASES))
def test_cycle_matches_reference(backend_name, case, precision):
    shape, coefficient, boundary, options = REFERENCE_CASES[case]
    k = {"rough": rough_coefficient(shape), "smooth": smooth_coefficient(shape)}.get(
        coefficient, coefficient)
    op = laplacian(shape, backend_name, precision, k, boundary)
    mg = GeometricMultigrid(op, **options)
    reference = ReferenceCycle(op, mg, options.get("smoother", "chebyshev"),
                               options.get("sweeps", 2), options.get("omega"))
    r = random_vector(op.n, seed=3).astype(op.dtype)
    z = Preconditioner(mg)(r)
    z_ref = reference(r.astype(np.float64))
    assert np.max(np.abs(z - z_ref)) <= REFERENCE_TOL[precision] * np.max(np.abs(z_ref))
