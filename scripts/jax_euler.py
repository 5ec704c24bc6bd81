"""Our own JAX version of the baseline of issue 19, what a user writes in an afternoon: the 2D
compressible Euler equations of an ideal gas in a periodic box, fp32, a MUSCL-Hancock scheme,
the whole run to an end time in one jitted `lax.while_loop`. bench_euler.py's time-to-solution
table (euler_tts.py) runs it beside our fused kernels.

The state u has shape (4, ny, nx): rho, rho vx, rho vy, E, x fastest. One step, unsplit:
  1. primitive variables w = (rho, vx, vy, p) and their half slopes h_x, h_y (`half_slope`);
  2. the Hancock predictor, half a step of the primitive equations from the slopes 2 h / dx:
     w* = w - dt/dx A_x(w) h_x - dt/dy A_y(w) h_y (A_x, A_y their Jacobians);
  3. the face states w* + h of the cell on the low side and w* - h of the one on the high side,
     and the Riemann flux between them (Rusanov, or HLLC with Davis wave speeds, written as in
     raw_kernels/fv/euler_scheme.h);
  4. one conservative update, u - dt/dx (F_i+1/2 - F_i-1/2) - dt/dy (G_j+1/2 - G_j-1/2).
dt comes from the state at the start of each step (`stable_dt`); the step that would pass the
end time is shortened to reach it, and t is set to the end time exactly.

SCHEMES: 'baseline' is the issue's (unlimited central slopes, Rusanov, dt = 0.4 min(dx, dy) /
max(c + |v|), |v| the speed); 'matched' is our scheme in space and time step on Hancock's one
stage (MC limiter, HLLC, dt = cfl / max((|vx| + c)/dx + (|vy| + c)/dy), cfl 0.5 unless given).

The functions of the scheme that call an array function take the array module as `xp` (numpy
or jax.numpy): the tests run the same step with NumPy where jax is not installed.
"""

import dataclasses
import os
import time

import numpy as np

LIMITERS = ("none", "minmod", "mc")
RIEMANN_SOLVERS = ("rusanov", "hllc")
DT_RULES = ("speed", "sum")
X, Y = -1, -2  # the axes of x and y in a (4, ny, nx) state


@dataclasses.dataclass(frozen=True)
class Scheme:
    """limiter: 'none' (the central difference), 'minmod' or 'mc'; riemann: 'rusanov' or
    'hllc'; dt_rule: 'speed', dt = cfl min(dx, dy) / max(c + |v|), or 'sum', dt = cfl /
    max((|vx| + c)/dx + (|vy| + c)/dy). The defaults are the issue's baseline."""

    limiter: str = "none"
    riemann: str = "rusanov"
    dt_rule: str = "speed"
    cfl: float = 0.4

    def __post_init__(self):
        for value, options in ((self.limiter, LIMITERS), (self.riemann, RIEMANN_SOLVERS),
                               (self.dt_rule, DT_RULES)):
            if value not in options:
                raise ValueError(f"expected one of {', '.join(options)}, got '{value}'")

    def describe(self):
        rule = ("cfl min(dx,dy)/max(c+|v|)" if self.dt_rule == "speed"
                else "cfl/max((|vx|+c)/dx+(|vy|+c)/dy)")
        return (f"MUSCL-Hancock, limiter {self.limiter}, {self.riemann}, dt = {rule}, "
                f"cfl {self.cfl:g}")


SCHEMES = {"baseline": Scheme(), "matched": Scheme("mc", "hllc", "sum", 0.5)}


def half_slope(xp, dl, dr, limiter):
    """Half the slope of a cell from its differences to the left (dl) and right (dr)
    neighbours: minmod and MC as raw_kernels/fv/limiter.h, 'none' the central difference."""
    if limiter == "none":
        return 0.25 * (dl + dr)
    sign = xp.copysign(1.0, dl)
    if limiter == "minmod":
        return sign * 0.5 * xp.maximum(0.0, xp.minimum(xp.abs(dl), sign * dr))
    return sign * xp.maximum(0.0, xp.minimum(xp.minimum(xp.abs(dl), sign * dr),
                                             0.25 * xp.abs(dl + dr)))


def primitives(u, gamma):
    """(rho, vx, vy, p) of a conserved state."""
    rho = u[0]
    vx, vy = u[1] / rho, u[2] / rho
    return rho, vx, vy, (gamma - 1) * (u[3] - 0.5 * rho * (vx * vx + vy * vy))


def stable_dt(xp, u, dx, dy, gamma, scheme):
    """The step the scheme's dt rule allows on state u."""
    rho, vx, vy, p = primitives(u, gamma)
    c = xp.sqrt(gamma * p / rho)
    if scheme.dt_rule == "speed":
        return scheme.cfl * min(dx, dy) / xp.max(c + xp.sqrt(vx * vx + vy * vy))
    return scheme.cfl / xp.max((xp.abs(vx) + c) / dx + (xp.abs(vy) + c) / dy)


def conserved_and_flux(w, gamma):
    """The conserved variables and the physical flux of a state (rho, un, ut, p) in the frame
    of a face (un normal to it)."""
    rho, un, ut, p = w
    energy = p / (gamma - 1) + 0.5 * rho * (un * un + ut * ut)
    mass = rho * un
    return (rho, mass, rho * ut, energy), (mass, mass * un + p, mass * ut, (energy + p) * un)


def rusanov(xp, left, right, gamma):
    ul, fl = conserved_and_flux(left, gamma)
    ur, fr = conserved_and_flux(right, gamma)
    speed = xp.maximum(xp.abs(left[1]) + xp.sqrt(gamma * left[3] / left[0]),
                       xp.abs(right[1]) + xp.sqrt(gamma * right[3] / right[0]))
    return tuple(0.5 * (a + b) - 0.5 * speed * (r - q) for a, b, q, r in zip(fl, fr, ul, ur))


def hllc(xp, left, right, gamma):
    """HLLC with Davis wave speeds: the flux of the side K the face sees, in the star region
    F_K + S_K (U*_K - U_K), as raw_kernels/fv/euler_scheme.h."""
    (rl, ul, _, pl), (rr, ur, _, pr) = left, right
    cl, cr = xp.sqrt(gamma * pl / rl), xp.sqrt(gamma * pr / rr)
    sl, sr = xp.minimum(ul - cl, ur - cr), xp.maximum(ul + cl, ur + cr)
    ml, mr = rl * (sl - ul), rr * (sr - ur)
    s_star = (ul * ml - ur * mr + pr - pl) / (ml - mr)
    take_left = (sl >= 0) | ((sr > 0) & (s_star >= 0))
    rho, un, ut, p = (xp.where(take_left, a, b) for a, b in zip(left, right))
    s, m = xp.where(take_left, sl, sr), xp.where(take_left, ml, mr)
    (_, _, _, energy), (f_mass, f_mom_n, f_mom_t, f_energy) = conserved_and_flux(
        (rho, un, ut, p), gamma)
    q = 1 / (s - s_star)
    e_star = q * ((s - un) * energy + (s_star - un) * (m * s_star + p))
    g_mass = f_mass + s * (m * q - rho)
    star = (g_mass, f_mom_n + s * (m * q * s_star - f_mass), g_mass * ut,
            f_energy + s * (e_star - energy))
    inside = (sl < 0) & (sr > 0)
    return tuple(xp.where(inside, g, f) for g, f in zip(star, (f_mass, f_mom_n, f_mom_t,
                                                               f_energy)))


def face_flux(xp, w, h, axis, gamma, riemann):
    """Lab-frame flux (4 arrays) through the high face of every cell along `axis` from the
    predicted states w and half slopes h (stacked (4, ny, nx))."""
    left, right = w + h, xp.roll(w - h, -1, axis)
    normal, tangential = (1, 2) if axis == X else (2, 1)
    frame = [0, normal, tangential, 3]
    flux = (rusanov if riemann == "rusanov" else hllc)(
        xp, [left[k] for k in frame], [right[k] for k in frame], gamma)
    mass, mom_n, mom_t, energy = flux
    return (mass, mom_n, mom_t, energy) if axis == X else (mass, mom_t, mom_n, energy)


def step(xp, u, dt, dx, dy, gamma, scheme):
    """u after one step of dt."""
    w = xp.stack(primitives(u, gamma))
    hx, hy = (half_slope(xp, w - xp.roll(w, 1, axis), xp.roll(w, -1, axis) - w, scheme.limiter)
              for axis in (X, Y))
    # The Hancock predictor: half a step of the primitive equations, along x and along y.
    rho, vx, vy, p = w
    dt_dx, dt_dy = dt / dx, dt / dy
    along_x = (vx * hx[0] + rho * hx[1], vx * hx[1] + hx[3] / rho, vx * hx[2],
               gamma * p * hx[1] + vx * hx[3])
    along_y = (vy * hy[0] + rho * hy[2], vy * hy[1], vy * hy[2] + hy[3] / rho,
               gamma * p * hy[2] + vy * hy[3])
    predicted = xp.stack([w[k] - dt_dx * along_x[k] - dt_dy * along_y[k] for k in range(4)])
    fx = xp.stack(face_flux(xp, predicted, hx, X, gamma, scheme.riemann))
    fy = xp.stack(face_flux(xp, predicted, hy, Y, gamma, scheme.riemann))
    return u - dt_dx * (fx - xp.roll(fx, 1, X)) - dt_dy * (fy - xp.roll(fy, 1, Y))


def advance(xp, t, steps, u, t_end, dx, dy, gamma, scheme):
    """(t, steps, u) after one step, the last one shortened to land on t_end exactly."""
    dt = stable_dt(xp, u, dx, dy, gamma, scheme)
    last = dt >= t_end - t
    dt = xp.where(last, t_end - t, dt)
    return xp.where(last, t_end, t + dt), steps + 1, step(xp, u, dt, dx, dy, gamma, scheme)


def import_jax():
    """jax, set to allocate device memory as it needs it (by default it takes 75% of the card
    when it starts, which would leave our solver too little); ImportError where absent."""
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax

    return jax


def jitted_run(scheme, dx, dy, gamma):
    """run(u, t_end) -> (t, steps, u at t_end): the whole run as one jitted while loop, from
    t = 0 (a NaN t, from a state gone bad, ends the loop too)."""
    jax = import_jax()
    jnp = jax.numpy

    def run(u, t_end):
        def body(state):
            return advance(jnp, *state, t_end, dx, dy, gamma, scheme)

        start = (jnp.float32(0), jnp.int32(0), u)
        return jax.lax.while_loop(lambda state: state[0] < t_end, body, start)

    return jax.jit(run)


def time_to_solution(u0, dx, dy, gamma, t_end, scheme, warm_t):
    """Run from u0 (4, ny, nx) to t_end in fp32 on jax's default device: compile seconds
    (ahead of time, for these shapes), then one run to warm_t (the first launch of the
    executable), then the timed run. Returns the figures and the final state (NumPy)."""
    jax = import_jax()
    u = jax.device_put(np.asarray(u0, np.float32))
    end = np.float32(t_end)
    start = time.perf_counter()
    compiled = jitted_run(scheme, dx, dy, gamma).lower(u, end).compile()
    compile_s = time.perf_counter() - start
    jax.block_until_ready(compiled(u, np.float32(warm_t)))
    start = time.perf_counter()
    t, steps, u_end = jax.block_until_ready(compiled(u, end))
    wall = time.perf_counter() - start
    return {"compile_s": compile_s, "wall_s": wall, "steps": int(steps), "t": float(t),
            "device": str(jax.devices()[0]), "u": np.asarray(u_end)}
