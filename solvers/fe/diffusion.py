"""The scalar diffusion operator -div(k grad u) with its Neumann and Robin conditions, as the
steady (Poisson) and the transient (heat) solvers both discretise it:

    K u = F    with  K = int k grad u . grad v + sum_Robin int alpha u v
                     F = int f v + sum_Neumann int g v + sum_Robin int alpha u0 v

for a conductivity k per cell, a source f, Neumann fluxes k du/dn = g and Robin conditions
k du/dn = alpha (u0 - u). Dirichlet conditions are the solver's (the steady solver cuts them
from K; the heat solver from M + theta dt K).

    diffusion = Diffusion(assembler, conductivity, source, neumann, robin)
    diffusion.assemble_matrix(); diffusion.assemble_load()
    diffusion.values, diffusion.load      # K's values on the pattern, F
    diffusion.sources                     # nodal source, fluxes, ambients (device, in order)
"""

import numpy as np

from .assembly import cells, facets
from .boundary import nodal
from .operator import AssembledOperator


class Diffusion(AssembledOperator):
    def __init__(self, assembler, conductivity, source=0.0, neumann=None, robin=None):
        """conductivity: one value per cell; source, fluxes and ambients: numbers or functions
        f(x, y[, z], t) evaluated at the nodes (at t = 0); neumann {name: Neumann}, robin
        {name: Robin}."""
        super().__init__(assembler)
        neumann, robin = dict(neumann or {}), dict(robin or {})
        space, mesh = self.space, self.space.mesh
        points = space.node_points

        # K: k grad u . grad v over the cells, plus alpha u v over the Robin facets.
        self.stiffness = self.add_form("stiffness", cells(space), conductivity)
        if robin:
            alpha = np.concatenate([np.full(len(mesh.boundaries[name]), condition.alpha)
                                    for name, condition in robin.items()])
            self.add_form("mass", facets(space, list(robin)), alpha)

        # F: f over the cells, the fluxes over the Neumann facets, alpha u0 over the Robin
        # facets, each from nodal values (sources in this order: the heat solver refreshes
        # those that change in time).
        self.add_load(cells(space), nodal(source, points))
        for name, condition in neumann.items():
            self.add_load(facets(space, [name]), nodal(condition.flux, points))
        for name, condition in robin.items():
            self.add_load(facets(space, [name]), nodal(condition.ambient, points),
                          condition.alpha)
