"""Boundary conditions by boundary (physical group) name.

    Dirichlet(value)            u = value on the boundary; value is a number or a function of
                                (x, y[, z], t) evaluated at the boundary nodes (Lagrange
                                interpolation, exact at the nodes). Vector spaces: value is
                                one such value for every constrained component or a sequence
                                of them, and components=(0, 2) constrains only those (a
                                roller); the default constrains every component
    Neumann(flux)               k du/dn = flux (outward normal); a number or a function
    Robin(alpha, ambient)       k du/dn = alpha (ambient - u): a heat-transfer coefficient
                                alpha > 0 and an ambient value (number or function)

Neumann fluxes and Robin ambients enter facet integrals through their nodal values, like
sources (assembly.LoadForm).
"""

from dataclasses import dataclass

import numpy as np


def nodal(value, points, t=0.0):
    """Values of a number or a function f(x, y[, z], t) at points (k, dim)."""
    if callable(value):
        return np.broadcast_to(np.asarray(value(*points.T, t), np.float64),
                               (points.shape[0],)).copy()
    return np.full(points.shape[0], float(value))


@dataclass(frozen=True)
class Dirichlet:
    value: object = 0.0
    components: tuple = None  # vector spaces: the constrained components (None: all)


@dataclass(frozen=True)
class Neumann:
    flux: object = 0.0


@dataclass(frozen=True)
class Robin:
    alpha: float
    ambient: object = 0.0

    def __post_init__(self):
        if not self.alpha > 0:
            raise ValueError(f"Robin alpha must be > 0, got {self.alpha!r}")


def split(conditions):
    """{name: condition} -> (dirichlet, neumann, robin) dicts, checking the types."""
    out = ({}, {}, {})
    for name, condition in conditions.items():
        kinds = (Dirichlet, Neumann, Robin)
        if not isinstance(condition, kinds):
            raise TypeError(f"boundary '{name}': expected Dirichlet, Neumann or Robin, got "
                            f"{condition!r}")
        out[[isinstance(condition, k) for k in kinds].index(True)][name] = condition
    return out


def dirichlet_values(space, conditions, t=0.0):
    """(constrained dofs, values (space.n,)) of the Dirichlet conditions at time t; later
    names win at shared nodes."""
    c = space.components
    values = np.zeros(space.n)
    constrained = np.zeros(space.n, bool)
    for name, condition in conditions.items():
        nodes = space.boundary_nodes([name])
        components = tuple(range(c)) if condition.components is None else condition.components
        if not set(components) <= set(range(c)):
            raise ValueError(f"boundary '{name}': components {components} outside 0..{c - 1}")
        given = condition.value
        per_component = (list(given) if isinstance(given, (list, tuple))
                         else [given] * len(components))
        if len(per_component) != len(components):
            raise ValueError(f"boundary '{name}': {len(per_component)} values for "
                             f"{len(components)} components")
        for component, value in zip(components, per_component):
            dofs = nodes * c + component
            values[dofs] = nodal(value, space.node_points[nodes], t)
            constrained[dofs] = True
    return np.flatnonzero(constrained), values
