"""Uniform structured grids in 1D, 2D and 3D, cell-centred."""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class StructuredGrid:
    """nx (x ny (x nz)) uniform cells on [x0, x1] (x [y0, y1] (x [z0, z1])). `ny = 1` with no
    y extent is 1D; a y extent and no z extent is 2D.

    Arrays of cell values are indexed [i, j, k] at (x_i, y_j, z_k), shape (nx,) in 1D, (nx, ny)
    in 2D, (nx, ny, nz) in 3D.
    """

    nx: int
    x: tuple = (0.0, 1.0)
    ny: int = 1
    y: tuple = None
    nz: int = 1
    z: tuple = None

    def __post_init__(self):
        if self.nx < 2 or self.ny < 1 or self.nz < 1:
            raise ValueError(f"grid needs nx >= 2, ny >= 1 and nz >= 1, got nx={self.nx} "
                             f"ny={self.ny} nz={self.nz}")
        if not self.x[1] > self.x[0]:
            raise ValueError(f"grid x range must increase, got {self.x}")
        if self.y is not None and (not self.y[1] > self.y[0] or self.ny < 2):
            raise ValueError(f"2D grid needs ny >= 2 and an increasing y range, got ny={self.ny} "
                             f"y={self.y}")
        if self.z is not None and (self.y is None or not self.z[1] > self.z[0] or self.nz < 2):
            raise ValueError(f"3D grid needs a y range, nz >= 2 and an increasing z range, got "
                             f"nz={self.nz} z={self.z}")
        if self.z is None and self.nz != 1:
            raise ValueError(f"a grid with nz={self.nz} needs a z range")

    def __repr__(self):
        # Only the axes the grid has: StructuredGrid(nx=32, x=(0.0, 1.0)) is 1D.
        axes = (("nx", "x"), ("ny", "y"), ("nz", "z"))[:self.ndim]
        fields = ", ".join(f"{n}={getattr(self, n)!r}, {a}={getattr(self, a)!r}" for n, a in axes)
        return f"StructuredGrid({fields})"

    @property
    def ndim(self):
        return 1 if self.y is None else 2 if self.z is None else 3

    @property
    def shape(self):
        return (self.nx, self.ny, self.nz)[:self.ndim]

    @property
    def ncells(self):
        return self.nx * self.ny * self.nz

    @property
    def dx(self):
        return (self.x[1] - self.x[0]) / self.nx

    @property
    def dy(self):
        return 1.0 if self.ndim == 1 else (self.y[1] - self.y[0]) / self.ny

    @property
    def dz(self):
        return 1.0 if self.ndim < 3 else (self.z[1] - self.z[0]) / self.nz

    @property
    def cell_volume(self):
        """dx (1D), dx dy (2D) or dx dy dz (3D)."""
        return float(np.prod([self.dx, self.dy, self.dz][:self.ndim]))

    def x_nodes(self):
        return np.linspace(self.x[0], self.x[1], self.nx + 1)

    def y_nodes(self):
        return np.linspace(self.y[0], self.y[1], self.ny + 1)

    def z_nodes(self):
        return np.linspace(self.z[0], self.z[1], self.nz + 1)

    def x_centres(self):
        return self.x[0] + (np.arange(self.nx) + 0.5) * self.dx

    def y_centres(self):
        return self.y[0] + (np.arange(self.ny) + 0.5) * self.dy

    def z_centres(self):
        return self.z[0] + (np.arange(self.nz) + 0.5) * self.dz

    def axis_nodes(self):
        """The node coordinates of each axis: [x_nodes] (1D) up to [x, y, z nodes] (3D)."""
        return [f() for f in (self.x_nodes, self.y_nodes, self.z_nodes)[:self.ndim]]

    def centres(self):
        """Cell-centre coordinates as arrays of `shape`: (x,) in 1D, (x, y) in 2D, (x, y, z)
        in 3D."""
        axes = [f() for f in (self.x_centres, self.y_centres, self.z_centres)[:self.ndim]]
        return tuple(np.meshgrid(*axes, indexing="ij")) if self.ndim > 1 else tuple(axes)
