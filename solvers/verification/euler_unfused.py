"""The 2D Euler scheme of raw_kernels/fv/euler_scheme.h written as plain whole-array operations.

This is the baseline a CuPy user would write without custom kernels: MUSCL on primitive
variables with the MC limiter, HLLC fluxes with Davis wave speeds, SSP-RK3, dt from the CFL
number. Every line is one or more elementwise kernels over the grid, so each stage reads and
writes dozens of full-size temporaries. `xp` is numpy or cupy; the step never reads device
data on the host.

State layout as the fused solver: conserved variables (rho, rho vx, rho vy, E) in an array of
shape (4, ny, nx), x fastest.
"""

import contextlib

# Boundary kinds handled here (the fused solver also has 'inflow').
BOUNDARY_KINDS = ("periodic", "transmissive", "reflective")


def _index(axis, start, stop):
    """Slice start:stop along axis -1 (x) or -2 (y) of an array (..., ny, nx)."""
    s = slice(start, stop)
    return (Ellipsis, s) if axis == -1 else (Ellipsis, s, slice(None))


class UnfusedEuler:
    """One periodic (or transmissive/reflective) 2D Euler problem; `step()` takes one step."""

    def __init__(self, xp, nx, ny, dx, dy, gamma=1.4, cfl=0.5, dtype="float32",
                 boundary=("periodic", "periodic")):
        self.xp = xp
        self.nx, self.ny = int(nx), int(ny)
        self.dtype = xp.dtype(dtype)
        real = self.dtype.type
        self.dx, self.dy = real(dx), real(dy)
        self.gamma = real(gamma)
        self.cfl = real(cfl)
        # boundary: (x kind, y kind), each side of an axis the same.
        for kind in boundary:
            if kind not in BOUNDARY_KINDS:
                raise ValueError(f"boundary kind must be one of {BOUNDARY_KINDS}, got {kind}")
        self.boundary = tuple(boundary)
        self.u = xp.zeros((4, self.ny, self.nx), self.dtype)
        self.dt = xp.zeros((), self.dtype)
        self.t = xp.zeros((), xp.float64)
        # NumPy warns about the inf/nan of HLLC branches that `where` discards; CuPy is silent.
        self._quiet = (lambda: xp.errstate(all="ignore")) if hasattr(xp, "errstate") else (
            contextlib.nullcontext)

    def set_conserved(self, u):
        self.u = self.xp.asarray(u, self.dtype).reshape(4, self.ny, self.nx).copy()
        self.t = self.xp.zeros((), self.xp.float64)

    # -- the scheme --------------------------------------------------------------------------
    def _max_rate(self, u):
        """Largest (|vx| + c) / dx + (|vy| + c) / dy; inf where the state is non-physical."""
        xp, g = self.xp, self.gamma
        rho = u[0]
        vx = u[1] / rho
        vy = u[2] / rho
        p = (g - 1) * (u[3] - 0.5 * rho * (vx * vx + vy * vy))
        a = xp.sqrt(g * p / rho)
        rate = (xp.abs(vx) + a) / self.dx + (xp.abs(vy) + a) / self.dy
        rate = xp.where((rho > 0) & (p > 0), rate, self.dtype.type(xp.inf))
        return rate.max()

    def _primitive(self, u):
        """rho, vx, vy, p per cell, computed the way euler_scheme.h's cell_prim does."""
        rho = u[0]
        inv_rho = 1 / rho
        vx = u[1] * inv_rho
        vy = u[2] * inv_rho
        p = (self.gamma - 1) * (u[3] - 0.5 * rho * (vx * vx + vy * vy))
        return rho, vx, vy, p

    def _extend(self, w, axis, kind, flip):
        """Two ghost cells on each side along `axis`, as euler_scheme.h's lab_prim maps outside
        indices."""
        xp, n = self.xp, w.shape[axis]
        if kind == "periodic":
            lo, hi = w[_index(axis, n - 2, n)], w[_index(axis, 0, 2)]
        else:  # mirror: index -1 -> 0, -2 -> 1, n -> n - 1, n + 1 -> n - 2
            lo, hi = xp.flip(w[_index(axis, 0, 2)], axis), xp.flip(w[_index(axis, n - 2, n)], axis)
            if kind == "reflective" and flip:
                lo, hi = -lo, -hi
        return xp.concatenate([lo, w, hi], axis=axis)

    def _half_slope(self, a, b, c):
        """Half the MC-limited slope of cell b between neighbours a and c."""
        xp = self.xp
        dl, dr = b - a, c - b
        m = xp.minimum(xp.minimum(2 * xp.abs(dl), 2 * xp.abs(dr)), 0.5 * xp.abs(dl + dr))
        slope = xp.where(dl * dr <= 0, self.dtype.type(0), xp.where(dl > 0, m, -m))
        return 0.5 * slope

    def _energy(self, rho, un, ut, p):
        return p / (self.gamma - 1) + 0.5 * rho * (un * un + ut * ut)

    @staticmethod
    def _physical_flux(rho, un, ut, p, energy):
        mass = rho * un
        return mass, mass * un + p, mass * ut, (energy + p) * un

    def _star_flux(self, rho, un, ut, p, energy, s, s_star):
        """HLLC flux of one star region (Toro, Spruce and Speares 1994)."""
        f = self._physical_flux(rho, un, ut, p, energy)
        k = rho * (s - un) / (s - s_star)
        e_star = k * (energy / rho + (s_star - un) * (s_star + p / (rho * (s - un))))
        return (f[0] + s * (k - rho), f[1] + s * (k * s_star - rho * un),
                f[2] + s * (k * ut - rho * ut), f[3] + s * (e_star - energy))

    def _hllc(self, wl, wr):
        """HLLC flux through faces with left and right states (rho, un, ut, p)."""
        xp, g = self.xp, self.gamma
        (rl, ul, _, pl), (rr, ur, _, pr) = wl, wr
        cl, cr = xp.sqrt(g * pl / rl), xp.sqrt(g * pr / rr)
        sl = xp.minimum(ul - cl, ur - cr)
        sr = xp.maximum(ul + cl, ur + cr)
        el, er = self._energy(*wl), self._energy(*wr)
        ml, mr = rl * (sl - ul), rr * (sr - ur)
        s_star = (pr - pl + ul * ml - ur * mr) / (ml - mr)
        # All four candidate fluxes over the whole grid, then select per face.
        fl = self._physical_flux(*wl, el)
        fr = self._physical_flux(*wr, er)
        fls = self._star_flux(*wl, el, sl, s_star)
        frs = self._star_flux(*wr, er, sr, s_star)
        return [xp.where(sl >= 0, a, xp.where(sr <= 0, b, xp.where(s_star >= 0, c, d)))
                for a, b, c, d in zip(fl, fr, fls, frs)]

    def _flux_difference(self, prim, axis):
        """(F(i+1/2) - F(i-1/2)) / h along axis, in the face frame (mass, mom_n, mom_t, E)."""
        rho, vx, vy, p = prim
        kind = self.boundary[0 if axis == -1 else 1]
        un, ut = (vx, vy) if axis == -1 else (vy, vx)
        # Cells -2 .. n+1 of each primitive variable (un flips at a reflective wall).
        ext = [self._extend(w, axis, kind, flip) for w, flip in
               ((rho, False), (un, True), (ut, False), (p, False))]
        n = rho.shape[axis]
        # Half slopes of cells -1 .. n, then the face states of faces -1/2 .. n-1/2.
        s = [self._half_slope(e[_index(axis, 0, n + 2)], e[_index(axis, 1, n + 3)],
                              e[_index(axis, 2, n + 4)]) for e in ext]
        wl = [e[_index(axis, 1, n + 2)] + h[_index(axis, 0, n + 1)] for e, h in zip(ext, s)]
        wr = [e[_index(axis, 2, n + 3)] - h[_index(axis, 1, n + 2)] for e, h in zip(ext, s)]
        flux = self._hllc(wl, wr)
        h = self.dx if axis == -1 else self.dy
        return [(f[_index(axis, 1, n + 1)] - f[_index(axis, 0, n)]) / h for f in flux]

    def residual(self, u):
        """-div F of the conserved variables, shape (4, ny, nx)."""
        prim = self._primitive(u)
        fx = self._flux_difference(prim, -1)
        fy = self._flux_difference(prim, -2)
        # x and y parts summed in the kernels' order (x normal momentum is vx, y normal is vy).
        return self.xp.stack([-(fx[0] + fy[0]), -(fx[1] + fy[2]), -(fx[2] + fy[1]),
                              -(fx[3] + fy[3])])

    def step(self):
        """One SSP-RK3 step (Shu-Osher form), dt = cfl / max rate, all on the device."""
        with self._quiet():
            u0 = self.u
            dt = self.cfl / self._max_rate(u0)
            u1 = u0 + dt * self.residual(u0)
            # (1 - w) u0 + w stage written as u0 + w (stage - u0), as the kernels do.
            u2 = u0 + 0.25 * (u1 + dt * self.residual(u1) - u0)
            self.u = u0 + self.dtype.type(2 / 3) * (u2 + dt * self.residual(u2) - u0)
            self.dt = dt
            self.t = self.t + dt
