"""The sides of a structured grid as the finite-volume solvers' boundary tables name them, and
the checks every such table gets: known sides only, each one given, periodic in pairs."""

SIDES = ("x_lo", "x_hi", "y_lo", "y_hi")  # of a 1D grid the first two, of a 2D grid all four
SIDES_3D = SIDES + ("z_lo", "z_hi")  # of a 3D grid


class BoundaryError(ValueError):
    """A wrong boundary specification; `side` names the side (None: the whole table)."""

    def __init__(self, side, message):
        super().__init__(f"boundary '{side}': {message}" if side else message)
        self.side = side
        self.reason = message


def specs_by_side(boundary, ndim):
    """[(side, spec)] of the grid's sides in SIDES_3D order; BoundaryError for a side the grid
    does not have or one that is missing."""
    sides = SIDES_3D[:2 * ndim]
    for side in boundary:
        if side not in sides:
            raise BoundaryError(side, f"a {ndim}D grid has only {', '.join(sides)}")
    for side in sides:
        if boundary.get(side) is None:
            raise BoundaryError(None, f"missing required key '{side}'")
    return [(side, boundary[side]) for side in sides]


def check_periodic_pairs(periodic):
    """periodic: one flag per side in SIDES_3D order; BoundaryError unless both sides of an
    axis are periodic or neither is."""
    for lo in range(0, len(periodic), 2):
        if periodic[lo] != periodic[lo + 1]:
            raise BoundaryError(SIDES_3D[lo], f"periodic must be set on both {SIDES_3D[lo]} "
                                f"and {SIDES_3D[lo + 1]}")
