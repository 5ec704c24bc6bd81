"""Boundary conditions of the 3D incompressible solver on the six sides of a MAC grid: the 2D
solver's kinds (solvers/fv/incompressible/boundary.py) with a wall's speed along two axes.

A side is one of
    "periodic"              (on both sides of an axis)
    "wall"                  no slip; {"wall": [U_b, U_c]} slides along the side with speed U_b
                            along the first and U_c along the second tangential axis, in x, y, z
                            order (x sides: [v, w]; y sides: [u, w]; z sides: [u, v]): a lid
    "slip"                  free slip: no normal velocity, no shear
    {"inflow": profile}     normal velocity along +x / +y / +z per boundary face: a number or an
                            array of the side's shape (n_b, n_c); tangential velocity zero
    "outflow"               zero normal gradient of the velocity, pressure zero

The pressure correction sees walls, slip and inflow as Neumann, outflow as Dirichlet.
"""

from dataclasses import dataclass, replace

import numpy as np

from ..incompressible.boundary import KINDS, Boundaries
from ..sides import SIDES_3D, BoundaryError, check_periodic_pairs, specs_by_side


def tangential_axes(axis):
    """The two axes along a side normal to `axis`, in x, y, z order."""
    return tuple(d for d in range(3) if d != axis)


@dataclass(frozen=True)
class Boundaries3D(Boundaries):
    """The 2D table over six sides; wall_speeds: per side (speed along the first, the second
    tangential axis); inflow: per side the normal velocity per face, shape (n_b, n_c) (zeros
    if none)."""

    @property
    def pressure_kinds(self):
        """{side: 'dirichlet' | 'neumann' | 'periodic'} of the pressure correction."""
        return {side: "dirichlet" if kind == "outflow" else kind if kind == "periodic"
                else "neumann" for side, kind in zip(SIDES_3D, self.kinds)}

    def side_profiles(self, shape):
        """The inflow profile of each side, [b, c] along its tangential axes."""
        return list(self.inflow)

    def with_profiles(self, profiles):
        """The table with side_profiles' `profiles` as the inflow (a block's)."""
        return replace(self, inflow=tuple(profiles))

    def max_speed(self):
        """The largest boundary speed (lid or inflow)."""
        inflow = max(float(np.max(np.abs(q), initial=0.0)) for q in self.inflow)
        return max(inflow, *(abs(s) for pair in self.wall_speeds for s in pair))

    def inflow_of_axis(self, axis):
        """The lo then the hi side's inflow of an axis, flattened first tangential axis fastest
        (the kernel's order)."""
        return np.concatenate([self.inflow[2 * axis + e].T.ravel() for e in (0, 1)])


def _finite_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and bool(np.isfinite(value))


def _wall(side, speeds):
    if not (isinstance(speeds, (list, tuple)) and len(speeds) == 2
            and all(_finite_number(s) for s in speeds)):
        raise BoundaryError(side, "wall speed must be two numbers, along the side's two "
                            f"tangential axes in x, y, z order, got {speeds!r}")
    return tuple(float(s) for s in speeds)


def _profile(side, value, shape):
    if _finite_number(value):
        return np.full(shape, float(value))
    try:
        values = None if callable(value) else np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        values = None
    if values is None or values.shape != shape or not np.all(np.isfinite(values)):
        raise BoundaryError(side, f"inflow profile must be a number or {shape[0]} x {shape[1]}"
                            " finite values (one per boundary face)")
    return values


def parse_boundaries(boundary, shape):
    """{side: spec} (all six sides), shape (nx, ny, nz) -> Boundaries3D; BoundaryError names a
    wrong side."""
    kinds, speeds, inflow = [], [], []
    for index, (side, spec) in enumerate(specs_by_side(boundary, 3)):
        across = tuple(shape[d] for d in tangential_axes(index // 2))
        speed, profile = (0.0, 0.0), np.zeros(across)
        if isinstance(spec, dict) and set(spec) == {"wall"}:
            speed, kind = _wall(side, spec["wall"]), "wall"
        elif isinstance(spec, dict) and set(spec) == {"inflow"}:
            profile, kind = _profile(side, spec["inflow"], across), "inflow"
        elif isinstance(spec, str) and spec in KINDS and spec != "inflow":
            kind = spec
        else:
            raise BoundaryError(side, "expected periodic, wall, {wall = [speed, speed]}, slip, "
                                f"{{inflow = profile}} or outflow, got {spec!r}")
        kinds.append(kind)
        speeds.append(speed)
        inflow.append(profile)
    check_periodic_pairs([kind == "periodic" for kind in kinds])
    return Boundaries3D(tuple(kinds), tuple(speeds), tuple(inflow))
