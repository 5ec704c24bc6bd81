"""An independent check of the lid-driven cavity reference: a stream-function/vorticity finite-
difference solver (NumPy/SciPy, no solver code from `solvers`) on (n + 1)^2 vertices, run to a
steady state, and its centreline velocities against the Ghia, Ghia & Shin (1982) table
(solvers/verification/ghia_cavity.py) that tests/test_fv_incompressible_cavity.py uses.

    python scripts/cavity_psi_omega.py 128      # about 2 minutes on one core

Scheme: lap psi = -omega solved by a sparse LU factorisation, omega advanced explicitly
(forward Euler, central differences) to t = 40, Thom's wall vorticity -2 (psi_1 + h U_wall) / h^2.
At n = 128 (Ghia's own grid) the largest differences from the table are v = -0.008 at
x = 0.86 and 0.91: the same as the MAC solver's (0.0082 at 48^2), which says the difference
there is the table's, not the MAC scheme's.
"""

import sys

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from solvers.verification.ghia_cavity import GHIA_U, GHIA_V, GHIA_X, GHIA_Y


def steady_cavity(n, nu=0.01, lid=1.0, end=40.0):
    """(psi, omega) on the vertices [i, j] (x, y) of the unit square at t = end."""
    h, m = 1.0 / n, n - 1
    second = sp.diags([-2 * np.ones(m), np.ones(m - 1), np.ones(m - 1)], [0, -1, 1])
    laplacian = (sp.kron(sp.identity(m), second) + sp.kron(second, sp.identity(m))) / h**2
    solve = spla.factorized(laplacian.tocsc())
    psi, omega = np.zeros((n + 1, n + 1)), np.zeros((n + 1, n + 1))
    dt = 0.2 * h**2 / nu
    for _ in range(int(end / dt)):
        psi[1:-1, 1:-1] = solve(-omega[1:-1, 1:-1].T.ravel()).reshape(m, m).T
        omega[:, -1] = -2 * (psi[:, -2] + h * lid) / h**2
        omega[:, 0] = -2 * psi[:, 1] / h**2
        omega[0, :] = -2 * psi[1, :] / h**2
        omega[-1, :] = -2 * psi[-2, :] / h**2
        u = (psi[1:-1, 2:] - psi[1:-1, :-2]) / (2 * h)
        v = -(psi[2:, 1:-1] - psi[:-2, 1:-1]) / (2 * h)
        c = omega[1:-1, 1:-1]
        east, west = omega[2:, 1:-1], omega[:-2, 1:-1]
        north, south = omega[1:-1, 2:], omega[1:-1, :-2]
        change = (-u * (east - west) / (2 * h) - v * (north - south) / (2 * h)
                  + nu * (east + west + north + south - 4 * c) / h**2)
        omega[1:-1, 1:-1] += dt * change
    return psi, omega


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    psi, _ = steady_cavity(n)
    h, mid = 1.0 / n, n // 2
    x = np.arange(n + 1) * h
    u = np.r_[0.0, (psi[mid, 2:] - psi[mid, :-2]) / (2 * h), 1.0]
    v = np.r_[0.0, -(psi[2:, mid] - psi[:-2, mid]) / (2 * h), 0.0]
    print(f"n = {n}: psi min {psi.min():.5f} (Ghia -0.103423)")
    print("   y    u - Ghia      x    v - Ghia")
    for y, du, xv, dv in zip(GHIA_Y, np.interp(GHIA_Y, x, u) - GHIA_U, GHIA_X,
                             np.interp(GHIA_X, x, v) - GHIA_V):
        print(f"{y:6.4f} {du:+9.5f}   {xv:6.4f} {dv:+9.5f}")


if __name__ == "__main__":
    main()
