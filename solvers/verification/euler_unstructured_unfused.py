"""The unstructured Euler scheme of docs/euler_unstructured.md written as plain whole-array
operations over all faces at once, independently of the fused kernels
(raw_kernels/fv/euler_unstructured.cu).

Each face's two side values, ghost state and Riemann flux are computed once, for every face in
one array operation, and a cell sums its faces by gathering them through a (cells, slots) table
of face indices with a sign (+1 owner, -1 neighbour, 0 an unused slot). Least-squares gradients,
Barth-Jespersen or Venkatakrishnan limiting, the face limiters of raw_kernels/fv/limiter.h,
HLLC (Toro's star states) or Rusanov fluxes in the lab frame (normal and tangential velocity as
vectors, no tangent basis), SSP-RK2 or SSP-RK3 and dt from the CFL number. This is the baseline a
CuPy user would write without custom kernels; `xp` is numpy or cupy, every array has one dtype,
and a step never reads device data on the host.

    reference = UnfusedUnstructuredEuler.from_table(np, face_geometry(mesh), {"x_lo": "wall", ..})
    reference.set_conserved(u)      # (dim + 2, ncells), the mesh's order
    reference.step()
"""

import contextlib

import numpy as np

from ..fv.euler_unstructured import (
    FACE_LIMITERS,
    GRADIENT_LIMITERS,
    INFLOW,
    PRESSURE,
    REFLECTIVE,
    TRANSMISSIVE,
    parse_boundary,
)

# Shu-Osher stage weights w: out = (1 - w) U^n + w (u + dt L(u)).
STAGE_WEIGHTS = {"ssp_rk2": (1.0, 0.5), "ssp_rk3": (1.0, 0.25, 2.0 / 3.0)}
RIEMANN = ("hllc", "rusanov")
VENKATAKRISHNAN_K = 5.0


def _choose(name, value, options):
    if value not in options:
        raise ValueError(f"{name} must be one of {tuple(options)}, got {value!r}")
    return value


class UnfusedUnstructuredEuler:
    """One Euler problem on the faces of `geometry` (solvers/mesh/faces.py's FaceGeometry);
    boundary_kinds and boundary_states per boundary group as parse_boundary returns them."""

    def __init__(self, xp, geometry, boundary_kinds, boundary_states, gamma=1.4,
                 reconstruction="muscl", limiter="barth_jespersen", riemann="hllc",
                 time_integrator="ssp_rk2", cfl=0.5, dtype="float64"):
        self.xp = xp
        self.dtype = xp.dtype(dtype)
        self.real = real = self.dtype.type
        self.reconstruction = _choose("reconstruction", reconstruction, ("first_order", "muscl"))
        self.limiter = _choose("limiter", limiter, (*GRADIENT_LIMITERS, *FACE_LIMITERS))
        self.riemann = _choose("riemann", riemann, RIEMANN)
        self.weights = STAGE_WEIGHTS[_choose("time_integrator", time_integrator, STAGE_WEIGHTS)]
        self.gamma, self.cfl = real(gamma), real(cfl)
        x = np.asarray(geometry.centroids, np.float64)
        self.ncells, self.dim = ncells, dim = x.shape

        # Faces reordered interior first: faces [0, ni) have a neighbour, [ni, nf) a ghost.
        neighbour = np.asarray(geometry.neighbour)
        order = np.concatenate([np.flatnonzero(neighbour >= 0), np.flatnonzero(neighbour < 0)])
        nf, ni = len(order), int(np.count_nonzero(neighbour >= 0))
        self.ni = ni
        owner, neighbour = np.asarray(geometry.owner)[order], neighbour[order][:ni]
        normal = np.asarray(geometry.normals, np.float64)[order]
        area = np.asarray(geometry.areas, np.float64)[order]
        xf = np.asarray(geometry.face_centroids, np.float64)[order]
        r_owner, r_neighbour = xf - x[owner], xf[:ni] - x[neighbour]

        # The far side of each face in the extended cell list [cells, ghosts] (ghost k of
        # boundary face ni + k at ncells + k), and its offset d from the owner's centroid.
        far = np.concatenate([neighbour, ncells + np.arange(nf - ni)])
        d = np.concatenate([x[neighbour] - x[owner[:ni]], 2.0 * r_owner[ni:]])
        dd = np.einsum("fa,fa->f", d, d)

        # Each cell's face slots: face index, sign (0: unused slot), far side, face offset.
        cell_faces = np.asarray(geometry.cell_faces)
        used = cell_faces >= 0
        position = np.empty(nf, np.int64)
        position[order] = np.arange(nf)
        slot_face = np.where(used, position[np.maximum(cell_faces, 0)], 0)
        cells = np.arange(ncells)[:, None]
        owns = owner[slot_face] == cells
        sign = np.where(used, np.where(owns, 1.0, -1.0), 0.0)
        slot_far = np.where(used, np.where(owns, far[slot_face], owner[slot_face]), cells)
        slot_r = np.where(used[..., None], xf[slot_face] - x[:, None, :], 0.0)

        # Least squares: M_i = sum over i's faces of d d^T (the same from either side).
        outer = d[:, :, None] * d[:, None, :]
        moments = (outer[slot_face] * used[..., None, None]).sum(axis=1)
        inverse = np.linalg.inv(moments)

        # Boundary faces: their group's kind and state (rho, v, p).
        group = np.asarray(geometry.boundary)[order[ni:]]
        kinds = np.asarray(boundary_kinds)[group]
        table = np.asarray(boundary_states, np.float64).reshape(-1, 5)
        state = np.concatenate([table[:, :1], table[:, 1:1 + dim], table[:, 4:]], axis=1)
        volumes = np.asarray(geometry.volumes, np.float64)

        # Device copies, in the dtype (vectors component-major: (dim, ...)).
        def device(a):
            return xp.asarray(np.ascontiguousarray(a), self.dtype)

        def index(a):
            return xp.asarray(np.ascontiguousarray(a), np.int64)

        self.owner, self.neighbour, self.far = index(owner), index(neighbour), index(far)
        self.owner_b = index(owner[ni:])
        self.normal, self.area = device(normal.T), device(area)
        self.normal_b = device(normal[ni:].T)
        self.d, self.r_owner = device(d.T), device(r_owner.T)
        self.r_neighbour = device(r_neighbour.T)
        # The face limiters' s = 2 (x_f - x_i) . d / (d . d) of each side (d from i to j).
        self.scale_owner = device(2.0 * np.einsum("fa,fa->f", r_owner, d) / dd)
        self.scale_neighbour = device(-2.0 * np.einsum("fa,fa->f", r_neighbour, d[:ni]) / dd[:ni])
        self.slot_face, self.slot_far = index(slot_face), index(slot_far)
        self.sign, self.used = device(sign), xp.asarray(used)
        self.slot_r = device(slot_r.transpose(2, 0, 1))
        self.slot_normal = device(normal[slot_face].transpose(2, 0, 1))
        self.slot_area = device(np.where(used, area[slot_face], 0.0))
        self.inverse = device(inverse.transpose(1, 2, 0))
        self.inv_vol = device(1.0 / volumes)
        self.eps2 = device((VENKATAKRISHNAN_K * volumes ** (1.0 / dim)) ** 3)
        self.state_b = device(state[group].T)
        self.kind_masks = {int(k): xp.asarray(kinds == k) for k in np.unique(kinds)
                           if k != TRANSMISSIVE}

        self.u = xp.zeros((dim + 2, ncells), self.dtype)
        self.dt = xp.zeros((), self.dtype)
        self.t = xp.zeros((), xp.float64)
        # NumPy warns about the inf/nan of branches that `where` discards; CuPy is silent.
        self._quiet = (lambda: xp.errstate(all="ignore")) if hasattr(xp, "errstate") else (
            contextlib.nullcontext)

    @classmethod
    def from_table(cls, xp, geometry, boundary, **scheme):
        """From a boundary table {group name: spec}, as the fused solver takes it."""
        kinds, states = parse_boundary(boundary, geometry.boundary_names,
                                       np.shape(geometry.centroids)[1])
        return cls(xp, geometry, kinds, states, **scheme)

    # -- state -----------------------------------------------------------------------------
    def set_conserved(self, u):
        """Conserved variables (dim + 2, ncells) in the mesh's order; t starts at 0."""
        self.u = self.xp.asarray(u, self.dtype).reshape(self.dim + 2, self.ncells).copy()
        self.t = self.xp.zeros((), self.xp.float64)

    def conserved(self):
        """Host copy (float64) of the conserved variables, (dim + 2, ncells)."""
        u = self.u.get() if hasattr(self.u, "get") else self.u
        return np.asarray(u, np.float64)

    # -- the scheme --------------------------------------------------------------------------
    def _primitive(self, u):
        """(rho, v, p) per cell from (rho, rho v, E)."""
        rho = u[0]
        v = u[1:-1] / rho
        p = (self.gamma - 1) * (u[-1] - self.real(0.5) * rho * (v * v).sum(axis=0))
        return self.xp.concatenate([rho[None], v, p[None]])

    def _join(self, scalar, vector, last):
        """(scalar, vector components, last) stacked along the variable axis."""
        return self.xp.concatenate([scalar[None], vector, last[None]])

    def _sound(self, w):
        """c = sqrt(gamma p / rho) of primitive states w."""
        return self.xp.sqrt(self.gamma * w[-1] / w[0])

    def _cell_sum(self, face_values, weights):
        """sum over each cell's face slots of weights * face_values: (..., nf) -> (..., ncells)."""
        return (face_values[..., self.slot_face] * weights).sum(axis=-1)

    def _farfield(self, w, un):
        """Characteristic (Riemann invariant) ghost states from w inside, the free stream out."""
        xp, g, n, inf = self.xp, self.gamma, self.normal_b, self.state_b
        gm1 = g - 1
        c, c_inf = self._sound(w), self._sound(inf)
        un_inf = (inf[1:-1] * n).sum(axis=0)
        r_out, r_in = un + 2 * c / gm1, un_inf - 2 * c_inf / gm1
        un_b, c_b = self.real(0.5) * (r_out + r_in), self.real(0.25) * gm1 * (r_out - r_in)
        # Entropy and tangential velocity from the side the flow comes from.
        inward = un_b < 0
        up = xp.where(inward, inf, w)
        v_t = up[1:-1] - xp.where(inward, un_inf, un) * n
        entropy = up[-1] / up[0] ** g
        rho_b = (c_b * c_b / (g * entropy)) ** (1 / gm1)
        subsonic = self._join(rho_b, v_t + un_b * n, rho_b * c_b * c_b / g)
        supersonic = xp.where(un < 0, inf, w)
        return xp.where(xp.abs(un) >= c, supersonic, subsonic)

    def _ghost(self, w):
        """g(w) at every boundary face from states w (nvar, boundary faces)."""
        xp, n = self.xp, self.normal_b
        un = (w[1:-1] * n).sum(axis=0)
        g = w
        # Each kind present (transmissive: w itself), over all boundary faces, kept where the
        # face is of that kind.
        for kind, mask in self.kind_masks.items():
            if kind == REFLECTIVE:
                value = self._join(w[0], w[1:-1] - 2 * un * n, w[-1])
            elif kind == INFLOW:
                value = self.state_b
            elif kind == PRESSURE:
                p = xp.where(un < self._sound(w), self.state_b[-1], w[-1])
                value = xp.concatenate([w[:-1], p[None]])
            else:
                value = self._farfield(w, un)
            g = xp.where(mask, value, g)
        return g

    def _half_slope(self, dl, dr):
        """limiter.h's half slope of a cell from its left and right differences."""
        xp, real = self.xp, self.real
        if self.limiter == "van_leer":
            return xp.where(dl * dr <= 0, real(0), dl * dr / (dl + dr))
        sign = xp.copysign(real(1), dl)
        top = xp.minimum(xp.abs(dl), sign * dr)
        if self.limiter == "mc":
            return sign * xp.maximum(real(0), xp.minimum(top, real(0.25) * xp.abs(dl + dr)))
        return real(0.5) * sign * xp.maximum(real(0), top)

    def _gradients(self, w, extended, diff):
        """Least-squares gradients (nvar, dim, ncells), times the gradient limiter's factor."""
        xp, real = self.xp, self.real
        rhs = self._cell_sum(diff[:, None, :] * self.d, self.used)
        grad = (self.inverse * rhs[:, None]).sum(axis=2)
        if self.limiter not in GRADIENT_LIMITERS:
            return grad
        # The range of the cell and its far sides, and the change to each face centroid.
        near = extended[:, self.slot_far]
        dmax = xp.maximum(near.max(axis=-1), w) - w
        dmin = xp.minimum(near.min(axis=-1), w) - w
        d2 = (grad[:, :, :, None] * self.slot_r).sum(axis=1)
        delta = xp.where(d2 > 0, dmax[..., None], dmin[..., None])
        if self.limiter == "barth_jespersen":
            phi = xp.minimum(real(1), delta / d2)
        else:
            eps2 = self.eps2[:, None]
            phi = ((delta * delta + eps2 + 2 * delta * d2)
                   / (delta * delta + 2 * d2 * d2 + delta * d2 + eps2))
        # The smallest factor over the cell's faces, at most 1 (1 where D2 = 0; unused slots
        # ignored).
        phi = xp.where(d2 == 0, real(1), phi)
        phi = xp.minimum(real(1), xp.where(self.used, phi, real(xp.inf)).min(axis=-1))
        return grad * phi[:, None]

    def _face_values(self, w):
        """Owner-side and far-side primitive values (nvar, nf) of every face."""
        xp, ni = self.xp, self.ni
        left, right = w[:, self.owner], w[:, self.neighbour]
        if self.reconstruction == "muscl":
            extended = xp.concatenate([w, self._ghost(w[:, self.owner_b])], axis=1)
            diff = extended[:, self.far] - left
            grad = self._gradients(w, extended, diff)
            g_owner, g_neighbour = grad[:, :, self.owner], grad[:, :, self.neighbour]
            if self.limiter in GRADIENT_LIMITERS:
                # Linear from each centroid to the face centroid.
                left = left + (g_owner * self.r_owner).sum(axis=1)
                right = right + (g_neighbour * self.r_neighbour).sum(axis=1)
            else:
                # MUSCL along the line to the far side, from each side (d and D change sign).
                up_owner = 2 * (g_owner * self.d).sum(axis=1) - diff
                left = left + self.scale_owner * self._half_slope(up_owner, diff)
                inner = diff[:, :ni]
                up_neighbour = inner - 2 * (g_neighbour * self.d[:, :ni]).sum(axis=1)
                right = right + self.scale_neighbour * self._half_slope(up_neighbour, -inner)
        # At a boundary the right state is the ghost of the left face value.
        right = xp.concatenate([right, self._ghost(left[:, ni:])], axis=1)
        return left, right

    def _side(self, w):
        """rho, v, p, v . n, energy and the physical flux (nvar, nf) of face states w."""
        g, n = self.gamma, self.normal
        rho, v, p = w[0], w[1:-1], w[-1]
        un = (v * n).sum(axis=0)
        energy = p / (g - 1) + self.real(0.5) * rho * (v * v).sum(axis=0)
        mass = rho * un
        return rho, v, p, un, energy, self._join(mass, mass * v + p * n, (energy + p) * un)

    def _rusanov(self, wl, wr):
        """(F_L + F_R) / 2 - s_max / 2 (U_R - U_L)."""
        xp, half = self.xp, self.real(0.5)
        rl, vl, _, unl, el, fl = self._side(wl)
        rr, vr, _, unr, er, fr = self._side(wr)
        hs = half * xp.maximum(xp.abs(unl) + self._sound(wl), xp.abs(unr) + self._sound(wr))
        jump = self._join(rr - rl, rr * vr - rl * vl, er - el)
        return half * (fl + fr) - hs * jump

    def _hllc(self, wl, wr):
        """HLLC with Davis wave speeds: the flux of the side the face sees, plus, inside the
        fan, S_K (U*_K - U_K) with Toro's star state of that side."""
        xp, n = self.xp, self.normal
        unl, unr = (wl[1:-1] * n).sum(axis=0), (wr[1:-1] * n).sum(axis=0)
        cl, cr = self._sound(wl), self._sound(wr)
        sl, sr = xp.minimum(unl - cl, unr - cr), xp.maximum(unl + cl, unr + cr)
        ml, mr = wl[0] * (sl - unl), wr[0] * (sr - unr)
        s_star = (wr[-1] - wl[-1] + unl * ml - unr * mr) / (ml - mr)
        # Left of the contact (or of the whole supersonic fan), else right.
        left = (sl >= 0) | ((sr > 0) & (s_star >= 0))
        rho, v, p, un, energy, flux = self._side(xp.where(left, wl, wr))
        s = xp.where(left, sl, sr)
        k = rho * (s - un) / (s - s_star)
        e_star = k * (energy / rho + (s_star - un) * (s_star + p / (rho * (s - un))))
        star = self._join(k - rho, k * (v + (s_star - un) * n) - rho * v, e_star - energy)
        return xp.where((sl < 0) & (sr > 0), flux + s * star, flux)

    def residual(self, u):
        """L(u) = -(1 / V_i) sum_f A_f F_f out of each cell, (nvar, ncells)."""
        left, right = self._face_values(self._primitive(u))
        flux = (self._hllc if self.riemann == "hllc" else self._rusanov)(left, right)
        return -self.inv_vol * self._cell_sum(flux * self.area, self.sign)

    def max_rate(self, u):
        """max_i (1 / (2 V_i)) sum_f (|v_i . n_f| + c_i) A_f; inf for a non-physical state."""
        xp = self.xp
        w = self._primitive(u)
        un = xp.abs((w[1:-1, :, None] * self.slot_normal).sum(axis=0))
        rates = self.real(0.5) * self.inv_vol * (
            (un + self._sound(w)[:, None]) * self.slot_area).sum(axis=-1)
        rates = xp.where((w[0] > 0) & (w[-1] > 0), rates, self.real(xp.inf))
        return rates.max()

    def step(self):
        """One SSP Runge-Kutta step, dt = cfl / max rate, all on the device."""
        with self._quiet():
            u0 = self.u
            dt = self.cfl / self.max_rate(u0)
            u = u0
            # Shu-Osher stages: out = (1 - w) U^n + w (u + dt L(u)).
            for w in self.weights:
                stage = u + dt * self.residual(u)
                u = stage if w == 1.0 else self.real(1 - w) * u0 + self.real(w) * stage
            self.u, self.dt, self.t = u, dt, self.t + dt
