"""Uniform structured grids in 1D and 2D, cell-centred."""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class StructuredGrid:
    """nx (x ny) uniform cells on [x0, x1] (x [y0, y1]). `ny = 1` with no y extent is 1D.

    Arrays of cell values are indexed [i, j] at (x_i, y_j), shape (nx,) in 1D, (nx, ny) in 2D.
    """

    nx: int
    x: tuple = (0.0, 1.0)
    ny: int = 1
    y: tuple = None

    def __post_init__(self):
        if self.nx < 2 or self.ny < 1:
            raise ValueError(f"grid needs nx >= 2 and ny >= 1, got nx={self.nx} ny={self.ny}")
        if not self.x[1] > self.x[0]:
            raise ValueError(f"grid x range must increase, got {self.x}")
        if self.y is not None and (not self.y[1] > self.y[0] or self.ny < 2):
            raise ValueError(f"2D grid needs ny >= 2 and an increasing y range, got ny={self.ny} "
                             f"y={self.y}")

    @property
    def ndim(self):
        return 1 if self.y is None else 2

    @property
    def shape(self):
        return (self.nx,) if self.ndim == 1 else (self.nx, self.ny)

    @property
    def ncells(self):
        return self.nx * self.ny

    @property
    def dx(self):
        return (self.x[1] - self.x[0]) / self.nx

    @property
    def dy(self):
        return 1.0 if self.ndim == 1 else (self.y[1] - self.y[0]) / self.ny

    def x_nodes(self):
        return np.linspace(self.x[0], self.x[1], self.nx + 1)

    def y_nodes(self):
        return np.linspace(self.y[0], self.y[1], self.ny + 1)

    def x_centres(self):
        return self.x[0] + (np.arange(self.nx) + 0.5) * self.dx

    def y_centres(self):
        return self.y[0] + (np.arange(self.ny) + 0.5) * self.dy

    def centres(self):
        """Cell-centre coordinates as arrays of `shape`: (x,) in 1D, (x, y) in 2D."""
        if self.ndim == 1:
            return (self.x_centres(),)
        return tuple(np.meshgrid(self.x_centres(), self.y_centres(), indexing="ij"))
