"""The implicit viscous stage of the incompressible solver: the increment d = u* - u^n of both
velocity components solves

    (I - s L) d = dt (AB2 advection + nu L u^n - grad p^n + f),    s = theta nu dt,

theta = 1/2 (Crank-Nicolson, second order with AB2 advection: Kim & Moin 1985) or 1 (backward
Euler, first order, for runs to a steady state). L is each component's 5-point Laplacian on its
own faces with the velocity's boundary rules made homogeneous (raw_kernels/fv/viscous.cu).
I - s L is symmetric positive definite with eigenvalues in [1, 1 + 4 s (1/dx^2 + 1/dy^2)]: at
the advective time step that is a condition number of a few tens at most on the grids we run
(1 + 8 s / h^2 with s / h^2 = theta cfl / Re_h, Re_h = |u| h / nu), so conjugate gradients
without a preconditioner converge in tens of iterations; multigrid would cost more per
iteration than it saves. dt changes every step, so the operator reads it on the device.
"""

import numpy as np

from ...linalg import ConjugateGradient
from ...linalg.operator import LinearOperator, overlap

THETA = {"implicit": 0.5, "backward_euler": 1.0}  # scheme.viscous -> theta ("explicit": none)
VISCOUS = ("explicit", *THETA)
# The stage's CG stops at |r| <= max(RTOL |b|, ATOL U_ref sqrt(n)): the increment to 1e-5 of
# itself, or an RMS residual of 1e-7 U_ref (near the fp32 rounding of u); at most MAXITER.
RTOL, ATOL, MAXITER = 1e-5, 1e-7, 200


def packed_size(shape):
    """Faces of every component of a 2D or 3D MAC grid of `shape` cells: the packed vector's
    length (component a has n_a + 1 faces along its axis)."""
    return sum(int(np.prod([n + (d == a) for d, n in enumerate(shape)]))
               for a in range(len(shape)))


class FaceHelmholtz(LinearOperator):
    """y = (I - s L) d over the packed face vector of a 2D or 3D MAC grid (raw_kernels/fv/
    mac.h, mac3.h), s = theta nu dt[0] with dt a device array (the clock's).

    shape and spacing of the grid's cells, codes: the sides' boundary kinds (boundary.KINDS) in
    SIDES order; kernel: viscous_helmholtz of the compiled viscous.cu or viscous3d.cu, launched
    on `launch` = (grid, block)."""

    def __init__(self, shape, spacing, codes, theta_nu, dt, kernel, launch, backend, dtype):
        super().__init__(packed_size(shape), dtype, backend)
        self.shape, self.codes, self.dt, self.launch = tuple(shape), tuple(codes), dt, launch
        self.theta_nu = float(theta_nu)
        self.weights = tuple(1.0 / h**2 for h in spacing)
        self._kernel = kernel

    def bind(self, x, y):
        """A callable that launches y = (I - s L) x (capturable)."""
        self.check_vector(x, "x")
        self.check_vector(y, "y")
        if overlap(x, y):
            raise ValueError("x and y must not overlap")
        return self._kernel.bind(*self.launch, x, y, self.dt, self.theta_nu, *self.shape,
                                 *self.weights, *self.codes)

    def diagonal(self):
        raise NotImplementedError("the diagonal changes with dt on the device: the viscous "
                                  "stage runs CG without a preconditioner")


class ViscousStage:
    """The viscous stage's CG solve: its b is the right-hand side the predictor writes, its x
    the increment d, which starts from the last step's (the solver then sets u* = u^n + d).
    A decomposed grid's block passes its operator, the whole grid's face count `unknowns` and
    krylov = DistributedConjugateGradient (block_viscous.py): the same rule on the whole grid."""

    def __init__(self, operator, reference_velocity, unknowns=None, krylov=ConjugateGradient):
        self.operator = operator
        atol = ATOL * reference_velocity * np.sqrt(unknowns or operator.n)
        self.solver = krylov(operator, None, rtol=RTOL, atol=atol, maxiter=MAXITER)
        self.b, self.x = self.solver.b, self.solver.x

    def reset(self, backend):
        """Forget the last increment (a new state)."""
        backend.fill(self.x, 0)
