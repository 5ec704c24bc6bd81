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

SOURCE = "fv/viscous.cu"
THREADS = 256  # threads of a viscous_helmholtz block
THETA = {"implicit": 0.5, "backward_euler": 1.0}  # scheme.viscous -> theta ("explicit": none)
VISCOUS = ("explicit", *THETA)


class FaceHelmholtz(LinearOperator):
    """y = (I - s L) d over the packed face vector of a MAC grid (u faces, then v faces; see
    raw_kernels/fv/mac.h), s = theta nu dt[0] with dt a device array (the clock's).

    shape (nx, ny), spacing (dx, dy), codes: the sides' boundary kinds (boundary.KINDS) in
    SIDES order; module: the compiled viscous.cu."""

    def __init__(self, shape, spacing, codes, theta_nu, dt, module, backend, dtype):
        nx, ny = shape
        super().__init__((nx + 1) * ny + nx * (ny + 1), dtype, backend)
        self.shape, self.codes, self.dt = (nx, ny), tuple(codes), dt
        self.theta_nu = float(theta_nu)
        self.weights = tuple(1.0 / h**2 for h in spacing)
        self._kernel = module.viscous_helmholtz

    def bind(self, x, y):
        """A callable that launches y = (I - s L) x (capturable)."""
        self.check_vector(x, "x")
        self.check_vector(y, "y")
        if overlap(x, y):
            raise ValueError("x and y must not overlap")
        return self._kernel.bind(-(-self.n // THREADS), THREADS, x, y, self.dt, self.theta_nu,
                                 *self.shape, *self.weights, *self.codes)

    def diagonal(self):
        raise NotImplementedError("the diagonal changes with dt on the device: the viscous "
                                  "stage runs CG without a preconditioner")


class ViscousStage:
    """The viscous stage's CG solve (its b: the right-hand side ins_predict writes; its x: the
    increment, which starts from the last step's) and the launch setting u* = u^n + d."""

    def __init__(self, shape, spacing, codes, nu, theta, dt, module, backend, dtype, rtol,
                 rms_atol, maxiter):
        self.operator = FaceHelmholtz(shape, spacing, codes, theta * nu, dt, module, backend,
                                      dtype)
        atol = rms_atol * np.sqrt(self.operator.n)  # |r| for an RMS residual of rms_atol
        self.solver = ConjugateGradient(self.operator, None, rtol=rtol, atol=atol,
                                        maxiter=maxiter)
        self.b, self.x = self.solver.b, self.solver.x

    def bind_increment(self, module, face_grid, block, u, v, us, vs, masks, codes):
        """A launch of u* = u^n + d on the predicted faces (bodies' faces set to rest)."""
        nx, ny = self.operator.shape
        return module.ins_viscous_increment.bind(face_grid, block, us, vs, u, v, self.x,
                                                 *masks, nx, ny, *codes)

    def reset(self, backend):
        """Forget the last increment (a new state)."""
        backend.fill(self.x, 0)

