"""Compressible Euler equations of an ideal gas, cell-centred finite volumes on unstructured
meshes of triangles and quadrilaterals (2D) or tetrahedra, hexahedra, wedges and pyramids (3D).

Least-squares gradients of the primitive variables limited by Barth-Jespersen or
Venkatakrishnan (or the structured solver's minmod, van Leer and MC along each face's line),
HLLC or Rusanov fluxes, SSP-RK2 or SSP-RK3; dt from the CFL number and each cell's volume and
face areas, on the device. The scheme: docs/euler_unstructured.md. Cells are stored in reverse
Cuthill-McKee order (neighbours near each other in memory); fields come back in the mesh's
order. A stage is two fused kernels (raw_kernels/fv/euler_unstructured.cu), each one thread a
cell gathering over its faces in a fixed order: the same bits every run.
"""

import math

import numpy as np

from ..backend.clock import RATE_BLOCK, DeviceClock
from ..mesh.faces import face_geometry
from ..mesh.renumber import locality_order
from ..solver import BackendLike, TimeDependentSolver
from .cell_slots import CellSlots
from .euler import RIEMANN_SOLVERS, _choice
from .euler import TIME_INTEGRATORS as STRUCTURED_INTEGRATORS
from .euler_fields import VELOCITIES, primitive, state_figures
from .sides import BoundaryError

SOURCE = "fv/euler_unstructured.cu"
# (dimension, slots a cell) of the meshes read: triangles, quadrilaterals or both; tetrahedra,
# pyramids or prisms, hexahedra or a mix (the most faces of the mesh's cell types).
SLOTS = ((2, 3), (2, 4), (3, 4), (3, 5), (3, 6))
RECONSTRUCTIONS = {"first_order": 1, "muscl": 2}
# Face limiters (limiter.h's LIMITER_*) and gradient limiters, as the kernels number them.
FACE_LIMITERS = {"minmod": 1, "van_leer": 2, "mc": 3}
GRADIENT_LIMITERS = {"barth_jespersen": 4, "venkatakrishnan": 5}
LIMITERS = {**GRADIENT_LIMITERS, **FACE_LIMITERS}
# The Runge-Kutta schemes of the structured solver, and MUSCL-Hancock: one stage whose face
# values are predicted half a step on from the cells' gradients.
TIME_INTEGRATORS = {**{k: v for k, v in STRUCTURED_INTEGRATORS.items() if v},
                    "hancock": ((1.0, 0, 1),)}
# Boundary kinds (GHOST_* of unstructured_cells.h), by the names a boundary table uses.
REFLECTIVE, TRANSMISSIVE, INFLOW, PRESSURE, FARFIELD = range(5)
NAMED_KINDS = {"wall": REFLECTIVE, "slip": REFLECTIVE, "symmetry": REFLECTIVE,
               "reflective": REFLECTIVE, "outflow": TRANSMISSIVE, "transmissive": TRANSMISSIVE}
STATE_KINDS = {"inflow": INFLOW, "farfield": FARFIELD, "outflow": PRESSURE}
STATE_KEYS = ("rho", "vx", "vy", "vz", "p")  # a boundary state (GHOST_STATE numbers)


def kernel_defines(ndim, riemann, faces):
    """The defines of euler_unstructured.cu: the dimension, the Riemann solver and the slots a
    cell (the reconstruction and the limiter are kernel arguments)."""
    return {"DIM": ndim, "RIEMANN": RIEMANN_SOLVERS[riemann], "RATE_THREADS": RATE_BLOCK,
            "FACES": faces}


def compiled_kernels():
    """Every (source, defines) this module compiles (REAL_BITS aside)."""
    for ndim, faces in SLOTS:
        for riemann in RIEMANN_SOLVERS:
            yield SOURCE, kernel_defines(ndim, riemann, faces)


def _state(name, kind, values, ndim):
    """A boundary state {rho, vx, ..., p} (outflow: {p}) -> the GHOST_STATE numbers."""
    keys = ("p",) if kind == "outflow" else ("rho", *VELOCITIES[:ndim], "p")
    wanted = "{" + ", ".join(keys) + "}"
    required = {"p"} if kind == "outflow" else {"rho", "p"}
    if (not isinstance(values, dict) or not required <= set(values) <= set(keys)
            or not all(isinstance(v, (int, float)) and math.isfinite(v)
                       for v in values.values())):
        raise BoundaryError(name, f"expected {kind} = {wanted} of numbers, got {values!r}")
    if not all(values[k] > 0 for k in ("rho", "p") if k in values):
        raise BoundaryError(name, f"{kind} rho and p must be > 0")
    return [float(values.get(k, 0.0)) for k in STATE_KEYS]


def parse_boundary(boundary, names, ndim, source="mesh"):
    """{group name: spec} -> (kind of each of the mesh's groups `names`, their states, 5 numbers
    each). A spec is wall, slip, symmetry, reflective, outflow, transmissive, or a table
    {inflow = {rho, vx, vy, (vz), p}}, {farfield = {...}}, {outflow = {p}}."""
    for name in boundary:
        if name not in names:
            raise BoundaryError(name, f"{source} has no boundary '{name}' (it has: "
                                f"{', '.join(names) or 'none'})")
    kinds, states = [], []
    for name in names:
        spec = boundary.get(name)
        state = [0.0] * len(STATE_KEYS)
        if isinstance(spec, str) and spec in NAMED_KINDS:
            kind = NAMED_KINDS[spec]
        elif isinstance(spec, dict) and len(spec) == 1 and next(iter(spec)) in STATE_KINDS:
            key = next(iter(spec))
            kind, state = STATE_KINDS[key], _state(name, key, spec[key], ndim)
        elif spec is None:
            raise BoundaryError(name, f"{source}'s boundary '{name}' is not in the boundary "
                                "table; give it wall, slip, symmetry, outflow, inflow or farfield")
        else:
            raise BoundaryError(name, f"expected {', '.join(NAMED_KINDS)}, {{inflow = {{..}}}}, "
                                f"{{farfield = {{..}}}} or {{outflow = {{p}}}}, got {spec!r}")
        kinds.append(kind)
        states.append(state)
    return np.asarray(kinds, np.int32), np.asarray(states, np.float64).ravel()


class UnstructuredEulerSolver(TimeDependentSolver):
    """The state and fused kernels of one Euler problem on a CellMesh; `step()` launches one
    time step. boundary: {boundary group of the mesh: spec} (see parse_boundary), every group
    given; geometry: the mesh's face_geometry, if already computed."""

    name = "euler_unstructured"

    def __init__(self, mesh, boundary: dict, gamma: float = 1.4, reconstruction: str = "muscl",
                 limiter: str = "barth_jespersen", riemann: str = "hllc",
                 time_integrator: str = "ssp_rk2", cfl: float = 0.5,
                 backend: BackendLike = "auto", precision: str = "fp32",
                 geometry=None) -> None:
        if not gamma > 1:
            raise ValueError(f"gamma must be > 1, got {gamma}")
        self.mesh = mesh
        self.gamma = float(gamma)
        self._platform(backend, precision)
        ndim = mesh.dim
        self.nvar = ndim + 2
        self.stages = TIME_INTEGRATORS[_choice("time_integrator", time_integrator,
                                                   TIME_INTEGRATORS)]
        self.scheme = {"reconstruction": _choice("reconstruction", reconstruction,
                                                 RECONSTRUCTIONS),
                       "limiter": _choice("limiter", limiter, LIMITERS),
                       "riemann": _choice("riemann", riemann, RIEMANN_SOLVERS),
                       "time_integrator": time_integrator, "cfl": cfl}
        self.geometry = geometry = face_geometry(mesh) if geometry is None else geometry
        kinds, states = parse_boundary(boundary, geometry.boundary_names, ndim, mesh.source)
        self.slots = slots = CellSlots(geometry, locality_order(geometry), mesh.source)
        n = self.ncells = mesh.ncells

        # Device memory: two state buffers (the clock's parity names the one holding the
        # state), a scratch stage, the gradients, the slots and the boundary table.
        b, real = self.backend, self.dtype
        self.buffers = [b.zeros((self.nvar, n), real) for _ in range(3)]
        self.gradients = b.zeros((self.nvar * ndim, n), real)
        mesh_arrays = {name: b.to_device(a if a.dtype == np.int32 else a.astype(real))
                       for name, a in slots.arrays.items()}
        mesh_arrays["eps2"] = b.to_device(slots.venkatakrishnan_eps2().astype(real))
        self.mesh_arrays = mesh_arrays
        self.bc_kind = b.to_device(kinds)
        self.bc_state = b.to_device(states.astype(real))
        kernels = b.module(SOURCE, real, kernel_defines(ndim, riemann, slots.faces_per_cell))
        method = RECONSTRUCTIONS[reconstruction], LIMITERS[limiter]
        blocks = -(-n // RATE_BLOCK)
        self.clock = DeviceClock(b, real, blocks, cfl)

        # A step: its dt (finish_dt), then per stage the gradients (MUSCL) and the update; the
        # last stage also leaves the stability rates of the new state for the next dt.
        m = mesh_arrays
        geometry_args = (m["nb"], m["area"], m["normal"], m["r"], m["d"], m["inv_vol"])
        self._launches = [self.clock.finish_dt]
        for k, (w, src, dst) in enumerate(self.stages):
            if reconstruction == "muscl":
                self._launches.append(kernels.euler_gradients.bind(
                    blocks, RATE_BLOCK, *self.buffers, self.clock.parity, src, self.gradients,
                    *geometry_args, m["lsq"], m["eps2"], self.bc_kind, self.bc_state,
                    self.clock.dt, n, method[1], self.gamma))
            self._launches.append(kernels.euler_stage.bind(
                blocks, RATE_BLOCK, *self.buffers, self.clock.parity, src, dst, self.clock.dt,
                self.gradients, *geometry_args, self.bc_kind, self.bc_state, self.clock.rates,
                n, *method, self.gamma, w, int(k == len(self.stages) - 1),
                int(time_integrator == "hancock")))
        # The first dt of a state set from the host (in buffer 0).
        self._rate = kernels.euler_max_rate.bind(
            blocks, RATE_BLOCK, self.buffers[0], self.clock.rates, m["area"], m["normal"],
            m["inv_vol"], n, self.gamma)

    # -- state -----------------------------------------------------------------------------------
    @property
    def field_names(self):
        return ("rho", *VELOCITIES[:self.mesh.dim], "p")

    def set_primitive(self, rho, vx, p, vy=0.0, t=0.0, vz=0.0):
        """Set the state from primitive cell fields ((ncells,) arrays in the mesh's order, or
        scalars), at time t."""
        shape = (self.ncells,)
        rho, vx, vy, vz, p = (np.broadcast_to(np.asarray(f, np.float64), shape)
                              for f in (rho, vx, vy, vz, p))
        if not (np.all(rho > 0) and np.all(p > 0)):
            raise ValueError("initial rho and p must be > 0 everywhere")
        if self.mesh.dim == 2 and np.any(vz != 0):
            raise ValueError("a 2D mesh has no z velocity")
        velocity = (vx, vy, vz)[:self.mesh.dim]
        energy = p / (self.gamma - 1) + 0.5 * rho * sum(v ** 2 for v in velocity)
        self.set_conserved(np.stack([rho, *(rho * v for v in velocity), energy]), t)

    def set_conserved(self, conserved, t=0.0):
        """Set the state from conserved variables of shape (nvar, ncells), the mesh's order."""
        shape = (self.nvar, self.ncells)
        if np.shape(conserved) != shape:
            raise ValueError(f"conserved state must have shape {shape}, got {np.shape(conserved)}")
        state = self.slots.stored(np.asarray(conserved, np.float64))
        self.backend.write(self.buffers[0], state.astype(self.dtype))
        self.clock.set(t=t, steps=0, parity=0)
        self._rate()

    def checkpoint_arrays(self):
        """The state buffer the clock's parity names (the others are written before they are
        read in every step)."""
        return {"conserved": self.buffers[self.clock.read().parity]}

    def conserved(self):
        """Host copy of the conserved variables, (nvar, ncells) in the mesh's order, float64."""
        buffer = self.buffers[self.clock.read().parity]
        return self.slots.in_mesh_order(self.backend.to_host(buffer).astype(np.float64))

    def fields(self):
        """Host copies of the primitive cell fields {rho, vx, vy, (vz,) p}, the mesh's order."""
        return primitive(self.conserved(), self.gamma, self.field_names)

    def diagnostics(self):
        """Totals of the conserved variables and the minima of density and pressure."""
        return state_figures(self.conserved(), self.geometry.volumes, self.fields())

    def diverged_message(self, t, steps):
        return (f"the solution became non-finite or non-physical (rho or p <= 0) at t={t:.6g} "
                f"after {steps} steps; try a smaller cfl or a more dissipative limiter")

    # -- time stepping -----------------------------------------------------------------------
    def step(self):
        """Launch one time step: dt on the device, then per stage gradients and update."""
        for launch in self._launches:
            launch()
