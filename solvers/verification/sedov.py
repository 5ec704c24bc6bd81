"""The Sedov-Taylor blast wave: the constant xi of the shock radius R(t) = xi (E t^2 / rho)^(1/5)
of a spherical point explosion in a cold ideal gas, from the self-similar solution.

With eta = r / R, u = R' f(eta), rho = rho1 g(eta), p = rho1 R'^2 h(eta) and R ~ t^(2/5), the
Euler equations become three ODEs in eta (mass, momentum, and the entropy p rho^-gamma of each
parcel kept):
    (f - eta) g' + g f' = -2 f g / eta
    (f - eta) f' + h' / g = 3 f / 2
    (f - eta) (h' / h - gamma g' / g) = 3
from the strong-shock (Rankine-Hugoniot) values at eta = 1, f = h = 2 / (gamma + 1),
g = (gamma + 1) / (gamma - 1), integrated inward (scipy.integrate.solve_ivp). The blast's
energy E = rho1 R'^2 R^3 4 pi I with I = int_0^1 (g f^2 / 2 + h / (gamma - 1)) eta^2 deta and
R' = 2 R / (5 t) gives xi = (25 / (16 pi I))^(1/5): 1.0328 for gamma 1.4 (G. I. Taylor 1950:
1.033) and 1.1517 for gamma 5/3 (Kamm and Timmes 2007: 1.15167). Independent of the project's
kernels: NumPy and SciPy only.
"""

import numpy as np
from scipy.integrate import quad, solve_ivp


def _derivatives(eta, y, gamma):
    """(f', g', h') at eta from the three ODEs, a 3 x 3 linear system."""
    f, g, h = y
    a = f - eta
    matrix = np.array([[g, a, 0.0], [a, 0.0, 1.0 / g], [0.0, -a * gamma / g, a / h]])
    return np.linalg.solve(matrix, [-2.0 * f * g / eta, 1.5 * f, 3.0])


def sedov_xi(gamma, eta_min=1e-4):
    """xi of R(t) = xi (E t^2 / rho)^(1/5) for a spherical blast in a gas of this gamma."""
    shock = [2.0 / (gamma + 1), (gamma + 1) / (gamma - 1), 2.0 / (gamma + 1)]
    solution = solve_ivp(_derivatives, (1.0, eta_min), shock, args=(gamma,), rtol=1e-10,
                         atol=1e-12, dense_output=True)

    def energy_density(eta):
        f, g, h = solution.sol(eta)
        return (0.5 * g * f * f + h / (gamma - 1)) * eta * eta

    integral = quad(energy_density, eta_min, 1.0, limit=200)[0]
    return (25.0 / (16.0 * np.pi * integral)) ** 0.2
