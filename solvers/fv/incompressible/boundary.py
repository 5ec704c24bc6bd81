"""Boundary conditions of the incompressible solver on the sides of a 2D MAC grid.

A side is one of
    "periodic"              (on both sides of an axis)
    "wall"                  no slip; {"wall": U} slides along the side at speed U (a lid)
    "slip"                  free slip: no normal velocity, no shear (a symmetry line)
    {"inflow": profile}     normal velocity into the domain given per boundary face: a number
                            or an array of the side's face count (ny on x sides, nx on y sides)
                            with the velocity along +x / +y; tangential velocity zero
    "outflow"               zero normal gradient of the velocity, pressure zero

The pressure correction sees walls, slip and inflow sides as zero normal gradient (Neumann),
outflow as zero pressure (Dirichlet), periodic sides as periodic.
"""

from dataclasses import dataclass, replace

import numpy as np

from ..sides import SIDES, BoundaryError, check_periodic_pairs, specs_by_side

KINDS = {"periodic": 0, "wall": 1, "slip": 2, "inflow": 3, "outflow": 4}


@dataclass(frozen=True)
class Boundaries:
    kinds: tuple  # kind name per side, in SIDES order
    wall_speeds: tuple  # tangential speed per side (walls only, else 0)
    inflow: np.ndarray  # normal velocity profiles: x_lo, x_hi (ny each), y_lo, y_hi (nx each)

    @property
    def codes(self):
        return tuple(KINDS[k] for k in self.kinds)

    def periodic(self, axis):
        return self.kinds[2 * axis] == "periodic"

    @property
    def pressure_kinds(self):
        """{side: 'dirichlet' | 'neumann' | 'periodic'} of the pressure correction."""
        return {side: ("dirichlet" if kind == "outflow" else
                       "periodic" if kind == "periodic" else "neumann")
                for side, kind in zip(SIDES, self.kinds)}

    @property
    def closed(self):
        """No outflow side: the pressure is defined up to a constant."""
        return "outflow" not in self.kinds

    def side_profiles(self, shape):
        """The inflow profile of each side (grid of `shape` cells), along its other axis."""
        nx, ny = shape
        return np.split(self.inflow, [ny, 2 * ny, 2 * ny + nx])

    def with_profiles(self, profiles):
        """The table with side_profiles' `profiles` as the inflow (a block's)."""
        return replace(self, inflow=np.concatenate(profiles))

    def max_speed(self):
        """The largest boundary speed (lid or inflow): the velocity scale of a start from rest."""
        return float(max(np.max(np.abs(self.inflow), initial=0.0),
                         max(abs(s) for s in self.wall_speeds)))


def _profile(side, value, count):
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return np.full(count, float(value))
    try:
        values = None if callable(value) else np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        values = None
    if values is None or values.shape != (count,) or not np.all(np.isfinite(values)):
        raise BoundaryError(side, f"inflow profile must be a number or {count} finite values "
                            "(one per boundary face)")
    return values


def parse_boundaries(boundary, nx, ny):
    """{side: spec} (all four sides) -> Boundaries; BoundaryError names a wrong side."""
    kinds, speeds = [], []
    inflow = [np.zeros(ny), np.zeros(ny), np.zeros(nx), np.zeros(nx)]
    for index, (side, spec) in enumerate(specs_by_side(boundary, 2)):
        speed = 0.0
        if isinstance(spec, dict) and set(spec) == {"wall"}:
            speed = spec["wall"]
            if not isinstance(speed, (int, float)) or isinstance(speed, bool) \
                    or not np.isfinite(speed):
                raise BoundaryError(side, f"wall speed must be a number, got {speed!r}")
            kind = "wall"
        elif isinstance(spec, dict) and set(spec) == {"inflow"}:
            inflow[index] = _profile(side, spec["inflow"], ny if index < 2 else nx)
            kind = "inflow"
        elif isinstance(spec, str) and spec in KINDS and spec != "inflow":
            kind = spec
        else:
            raise BoundaryError(side, "expected periodic, wall, {wall = speed}, slip, "
                                f"{{inflow = profile}} or outflow, got {spec!r}")
        kinds.append(kind)
        speeds.append(float(speed))
    check_periodic_pairs([kind == "periodic" for kind in kinds])
    return Boundaries(tuple(kinds), tuple(speeds), np.concatenate(inflow))
