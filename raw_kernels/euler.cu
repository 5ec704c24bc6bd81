// Compressible Euler equations of an ideal gas on a structured grid, finite volumes.
//
// State: conserved variables stored variable by variable (structure of arrays), cell (i, j) at
// j * nx + i, x fastest. DIM 1: rho, rho*vx, E. DIM 2: rho, rho*vx, rho*vy, E.
//
// Compile-time scheme:
//   DIM             1 or 2
//   RECONSTRUCTION  1 first order, 2 MUSCL on primitive variables
//   LIMITER         1 minmod, 2 van Leer, 3 monotonized central (MC)
//   RIEMANN         1 Rusanov, 2 HLLC
//
// Boundaries are applied while loading neighbours (no ghost cells, no extra launch): an index
// outside the grid is mapped through the boundary of its side.
#include "prelude.h"
#include "reduce.h"

#define NVAR (DIM + 2)
#define VAR_E (DIM + 1)

#define BC_PERIODIC 0
#define BC_TRANSMISSIVE 1
#define BC_REFLECTIVE 2
#define BC_INFLOW 3

// Primitive state in the frame of a face: velocity normal (un) and tangential (ut) to it.
struct Prim {
    real rho, un, ut, p;
};

// Flux through a face, in the same frame.
struct Flux {
    real mass, mom_n, mom_t, energy;
};

struct Grid {
    const real* u;
    const real* inflow;  // per side (x_lo, x_hi, y_lo, y_hi): rho, vx, vy, p
    int nx, ny;
    int bc[4];
    real gamma;
};

// a^2 + b^2 rounded the same way for (a, b) and (b, a): the compiler contracts the sum to an
// FMA, so order the terms by magnitude to keep x <-> y symmetric problems symmetric to the bit.
DEVICE real sum_of_squares(real a, real b)
{
    const real lo = fmin(fabs(a), fabs(b)), hi = fmax(fabs(a), fabs(b));
    return lo * lo + hi * hi;
}

// Primitive state of cell (i, j) seen from a face normal to axis `dir` (0 x, 1 y). At most one
// of i, j lies outside the grid: the stencils of x faces move along x only, those of y faces
// along y only.
DEVICE Prim cell_prim(const Grid& g, int i, int j, int dir)
{
    int side = -1;
    if (i < 0) side = 0;
    else if (i >= g.nx) side = 1;
    else if (j < 0) side = 2;
    else if (j >= g.ny) side = 3;

    real flip = R(1);
    if (side >= 0) {
        const int kind = g.bc[side];
        if (kind == BC_INFLOW) {
            const real* s = g.inflow + 4 * side;
            Prim w;
            w.rho = s[0];
            w.un = dir == 0 ? s[1] : s[2];
            w.ut = dir == 0 ? s[2] : s[1];
            w.p = s[3];
            return w;
        }
        if (side < 2) {
            if (kind == BC_PERIODIC) i = i < 0 ? i + g.nx : i - g.nx;
            else i = i < 0 ? -1 - i : 2 * g.nx - 1 - i;
        } else {
            if (kind == BC_PERIODIC) j = j < 0 ? j + g.ny : j - g.ny;
            else j = j < 0 ? -1 - j : 2 * g.ny - 1 - j;
        }
        // A wall mirrors the velocity normal to it; that normal is the face's (see above).
        if (kind == BC_REFLECTIVE) flip = R(-1);
    }

    const int ncell = g.nx * g.ny;
    const int c = j * g.nx + i;
    const real rho = g.u[c];
    const real inv_rho = R(1) / rho;
    const real vx = g.u[ncell + c] * inv_rho;
#if DIM == 2
    const real vy = g.u[2 * ncell + c] * inv_rho;
#else
    const real vy = R(0);
#endif
    const real energy = g.u[VAR_E * ncell + c];
    Prim w;
    w.rho = rho;
    w.un = flip * (dir == 0 ? vx : vy);
    w.ut = dir == 0 ? vy : vx;
    w.p = (g.gamma - R(1)) * (energy - R(0.5) * rho * sum_of_squares(vx, vy));
    return w;
}

#if LIMITER == 1
DEVICE real limited_slope(real dl, real dr)
{
    if (dl * dr <= R(0)) return R(0);
    return fabs(dl) < fabs(dr) ? dl : dr;
}
#elif LIMITER == 2
DEVICE real limited_slope(real dl, real dr)
{
    if (dl * dr <= R(0)) return R(0);
    return R(2) * dl * dr / (dl + dr);
}
#else
DEVICE real limited_slope(real dl, real dr)
{
    if (dl * dr <= R(0)) return R(0);
    const real m = fmin(fmin(R(2) * fabs(dl), R(2) * fabs(dr)), R(0.5) * fabs(dl + dr));
    return dl > R(0) ? m : -m;
}
#endif

// Half the limited slope of cell b, whose neighbours are a and c: face value = b +- this.
DEVICE Prim half_slope(const Prim& a, const Prim& b, const Prim& c)
{
    Prim s;
    s.rho = R(0.5) * limited_slope(b.rho - a.rho, c.rho - b.rho);
    s.un = R(0.5) * limited_slope(b.un - a.un, c.un - b.un);
    s.ut = R(0.5) * limited_slope(b.ut - a.ut, c.ut - b.ut);
    s.p = R(0.5) * limited_slope(b.p - a.p, c.p - b.p);
    return s;
}

DEVICE Flux physical_flux(const Prim& w, real energy)
{
    Flux f;
    f.mass = w.rho * w.un;
    f.mom_n = f.mass * w.un + w.p;
    f.mom_t = f.mass * w.ut;
    f.energy = (energy + w.p) * w.un;
    return f;
}

DEVICE real total_energy(const Prim& w, real gamma)
{
    return w.p / (gamma - R(1)) + R(0.5) * w.rho * (w.un * w.un + w.ut * w.ut);
}

#if RIEMANN == 1
// Rusanov (local Lax-Friedrichs).
DEVICE Flux riemann_flux(const Prim& l, const Prim& r, real gamma)
{
    const real el = total_energy(l, gamma), er = total_energy(r, gamma);
    const Flux fl = physical_flux(l, el), fr = physical_flux(r, er);
    const real cl = sqrt(gamma * l.p / l.rho), cr = sqrt(gamma * r.p / r.rho);
    const real s = fmax(fabs(l.un) + cl, fabs(r.un) + cr);
    Flux f;
    f.mass = R(0.5) * (fl.mass + fr.mass) - R(0.5) * s * (r.rho - l.rho);
    f.mom_n = R(0.5) * (fl.mom_n + fr.mom_n) - R(0.5) * s * (r.rho * r.un - l.rho * l.un);
    f.mom_t = R(0.5) * (fl.mom_t + fr.mom_t) - R(0.5) * s * (r.rho * r.ut - l.rho * l.ut);
    f.energy = R(0.5) * (fl.energy + fr.energy) - R(0.5) * s * (er - el);
    return f;
}
#else
// HLLC (Toro, Spruce and Speares 1994) with Davis wave-speed estimates.
DEVICE Flux hllc_star_flux(const Prim& w, real energy, real s, real s_star)
{
    const Flux f = physical_flux(w, energy);
    const real k = w.rho * (s - w.un) / (s - s_star);
    Flux out;
    out.mass = f.mass + s * (k - w.rho);
    out.mom_n = f.mom_n + s * (k * s_star - w.rho * w.un);
    out.mom_t = f.mom_t + s * (k * w.ut - w.rho * w.ut);
    const real e_star =
        k * (energy / w.rho + (s_star - w.un) * (s_star + w.p / (w.rho * (s - w.un))));
    out.energy = f.energy + s * (e_star - energy);
    return out;
}

DEVICE Flux riemann_flux(const Prim& l, const Prim& r, real gamma)
{
    const real cl = sqrt(gamma * l.p / l.rho), cr = sqrt(gamma * r.p / r.rho);
    const real sl = fmin(l.un - cl, r.un - cr);
    const real sr = fmax(l.un + cl, r.un + cr);
    const real el = total_energy(l, gamma), er = total_energy(r, gamma);
    if (sl >= R(0)) return physical_flux(l, el);
    if (sr <= R(0)) return physical_flux(r, er);
    const real ml = l.rho * (sl - l.un), mr = r.rho * (sr - r.un);
    const real s_star = (r.p - l.p + l.un * ml - r.un * mr) / (ml - mr);
    if (s_star >= R(0)) return hllc_star_flux(l, el, sl, s_star);
    return hllc_star_flux(r, er, sr, s_star);
}
#endif

// Flux through the face between cells b and c; a and d are the next cells out. Both cells
// beside a face call this with the same arguments, so they see bit-identical fluxes and the
// scheme conserves mass, momentum and energy to rounding.
DEVICE Flux face_flux(const Prim& a, const Prim& b, const Prim& c, const Prim& d, real gamma)
{
#if RECONSTRUCTION == 2
    const Prim sb = half_slope(a, b, c), sc = half_slope(b, c, d);
    Prim l, r;
    l.rho = b.rho + sb.rho;
    l.un = b.un + sb.un;
    l.ut = b.ut + sb.ut;
    l.p = b.p + sb.p;
    r.rho = c.rho - sc.rho;
    r.un = c.un - sc.un;
    r.ut = c.ut - sc.ut;
    r.p = c.p - sc.p;
    return riemann_flux(l, r, gamma);
#else
    (void)a;
    (void)d;
    return riemann_flux(b, c, gamma);
#endif
}

// Net outflow through the two faces of cell (i, j) along `dir`, divided by the cell width.
DEVICE Flux flux_difference(const Grid& g, int i, int j, int dir, real h)
{
    const int di = dir == 0 ? 1 : 0, dj = dir == 0 ? 0 : 1;
    const Prim m2 = cell_prim(g, i - 2 * di, j - 2 * dj, dir);
    const Prim m1 = cell_prim(g, i - di, j - dj, dir);
    const Prim c0 = cell_prim(g, i, j, dir);
    const Prim p1 = cell_prim(g, i + di, j + dj, dir);
    const Prim p2 = cell_prim(g, i + 2 * di, j + 2 * dj, dir);
    const Flux lo = face_flux(m2, m1, c0, p1, g.gamma);
    const Flux hi = face_flux(m1, c0, p1, p2, g.gamma);
    Flux d;
    d.mass = (hi.mass - lo.mass) / h;
    d.mom_n = (hi.mom_n - lo.mom_n) / h;
    d.mom_t = (hi.mom_t - lo.mom_t) / h;
    d.energy = (hi.energy - lo.energy) / h;
    return d;
}

// One Runge-Kutta stage, flux and update fused: out = (1 - w) u0 + w (u + dt L(u)), written
// as u0 + w (stage - u0) so that the weights sum to exactly 1 in `real` and the totals stay
// conserved to rounding (1/3 + 2/3 rounded to float is not 1). w == 1 (a first stage) does not
// read u0. Reads each conserved variable of u (and u0) and writes each of out once. dt == 0
// means the run has reached its stop time: the stage writes nothing.
KERNEL void euler_stage(const real* __restrict__ u, const real* __restrict__ u0,
                        real* __restrict__ out, const real* __restrict__ dt_dev,
                        const real* __restrict__ inflow, int nx, int ny, int bc_xlo, int bc_xhi,
                        int bc_ylo, int bc_yhi, real dx, real dy, real gamma, real w)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= nx || j >= ny) return;
    const real dt = dt_dev[0];
    if (dt == R(0)) return;

    Grid g;
    g.u = u;
    g.inflow = inflow;
    g.nx = nx;
    g.ny = ny;
    g.bc[0] = bc_xlo;
    g.bc[1] = bc_xhi;
    g.bc[2] = bc_ylo;
    g.bc[3] = bc_yhi;
    g.gamma = gamma;

    // Residual -div F per conserved variable; x and y parts are summed symmetrically so that
    // a problem symmetric under x <-> y stays so to the last bit.
    const Flux fx = flux_difference(g, i, j, 0, dx);
    real res[NVAR];
#if DIM == 2
    const Flux fy = flux_difference(g, i, j, 1, dy);
    res[0] = -(fx.mass + fy.mass);
    res[1] = -(fx.mom_n + fy.mom_t);
    res[2] = -(fx.mom_t + fy.mom_n);
    res[3] = -(fx.energy + fy.energy);
#else
    (void)dy;
    res[0] = -fx.mass;
    res[1] = -fx.mom_n;
    res[2] = -fx.energy;
#endif

    const int ncell = nx * ny;
    const int c = j * nx + i;
    for (int v = 0; v < NVAR; ++v) {
        const real stage = u[v * ncell + c] + dt * res[v];
        if (w == R(1)) {
            out[v * ncell + c] = stage;
        } else {
            const real old = u0[v * ncell + c];
            out[v * ncell + c] = old + w * (stage - old);
        }
    }
}

// Per block, the largest stability rate (|vx| + c) / dx + (|vy| + c) / dy over its cells
// (grid-stride). A non-finite or non-physical cell gives an infinite rate, which stops the run.
BLOCK_KERNEL void euler_max_rate(const real* __restrict__ u, real* __restrict__ rates, int nx,
                                 int ny, real dx, real dy, real gamma)
{
    __shared__ real s[256];
#if DIM == 1
    (void)dy;
#endif
    PHASE {
        const int ncell = nx * ny;
        real m = R(0);
        for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < ncell;
             c += blockDim.x * gridDim.x) {
            const real rho = u[c];
            const real vx = u[ncell + c] / rho;
#if DIM == 2
            const real vy = u[2 * ncell + c] / rho;
#else
            const real vy = R(0);
#endif
            const real kinetic = R(0.5) * rho * sum_of_squares(vx, vy);
            const real p = (gamma - R(1)) * (u[VAR_E * ncell + c] - kinetic);
            real rate = REAL_INF;
            if (rho > R(0) && p > R(0)) {
                const real a = sqrt(gamma * p / rho);
                rate = (fabs(vx) + a) / dx;
#if DIM == 2
                rate += (fabs(vy) + a) / dy;
#endif
                if (!(rate < REAL_INF)) rate = REAL_INF;
            }
            m = fmax(m, rate);
        }
        s[threadIdx.x] = m;
    }
    block_max(s);
    PHASE {
        if (threadIdx.x == 0) rates[blockIdx.x] = s[0];
    }
}
