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

// Primitive state. In the frame of a face: velocity normal (un) and tangential (ut) to it; in
// the lab frame (the shared-memory box of a stage block): un = vx, ut = vy.
struct Prim {
    real rho, un, ut, p;
};

// Flux through a face, in the same frame.
struct Flux {
    real mass, mom_n, mom_t, energy;
};

// Threads of a stage block, and the cells it updates: every thread computes the flux through
// the low x face (and low y face) of its cell, so a block of BLOCK_X x BLOCK_Y threads has all
// the faces of (BLOCK_X - 1) x (BLOCK_Y - 1) cells and computes each face once.
#if DIM == 2
#define BLOCK_X 32
#define BLOCK_Y 8
#define CELLS_Y (BLOCK_Y - 1)
#define HALO_Y 2
#else
#define BLOCK_X 256
#define BLOCK_Y 1
#define CELLS_Y 1
#define HALO_Y 0
#endif
#define CELLS_X (BLOCK_X - 1)
#define THREADS (BLOCK_X * BLOCK_Y)
// The primitive states a block reads: the stencils (i - 2 .. i + 1) of its threads' low faces,
// columns i0 - 2 .. i0 + BLOCK_X and, in 2D, rows j0 - 2 .. j0 + BLOCK_Y.
#define BOX_X (BLOCK_X + 3)
#if DIM == 2
#define BOX_Y (BLOCK_Y + 3)
#else
#define BOX_Y 1
#endif
#define BOX (BOX_X * BOX_Y)

// Boundary kinds are separate members, not an array: a runtime index into an array would put
// the whole struct in (slow) local memory.
struct Grid {
    const real* u;
    const real* inflow;  // per side (x_lo, x_hi, y_lo, y_hi): rho, vx, vy, p
    int nx, ny;
    int bc_xlo, bc_xhi, bc_ylo, bc_yhi;
    real gamma;
};

// a^2 + b^2 rounded the same way for (a, b) and (b, a): the compiler contracts the sum to an
// FMA, so order the terms by magnitude to keep x <-> y symmetric problems symmetric to the bit.
DEVICE real sum_of_squares(real a, real b)
{
    const real lo = fmin(fabs(a), fabs(b)), hi = fmax(fabs(a), fabs(b));
    return lo * lo + hi * hi;
}

// Primitive state of cell (i, j) in the lab frame (un = vx, ut = vy). The cell may be
// a ghost cell of one side: its index is mapped through that side's boundary, and a wall
// mirrors the velocity normal to it. Cells outside every side's two ghost layers (only
// corners and the far end of a partial tile) are never used; they get a harmless state.
DEVICE Prim lab_prim(const Grid& g, int i, int j)
{
    Prim w;
    int side = -1;
    if (i < 0) side = 0;
    else if (i >= g.nx) side = 1;
    if (j < 0 || j >= g.ny) side = side >= 0 ? 4 : (j < 0 ? 2 : 3);
    if (side == 4 || i < -2 || i >= g.nx + 2 || j < -2 || j >= g.ny + 2) {
        w.rho = R(1);
        w.un = R(0);
        w.ut = R(0);
        w.p = R(1);
        return w;
    }

    real flip_x = R(1), flip_y = R(1);
    if (side >= 0) {
        const int kind = side == 0 ? g.bc_xlo : side == 1 ? g.bc_xhi : side == 2 ? g.bc_ylo
                                                                             : g.bc_yhi;
        if (kind == BC_INFLOW) {
            const real* s = g.inflow + 4 * side;
            w.rho = s[0];
            w.un = s[1];
            w.ut = s[2];
            w.p = s[3];
            return w;
        }
        if (side < 2) {
            if (kind == BC_PERIODIC) i = i < 0 ? i + g.nx : i - g.nx;
            else i = i < 0 ? -1 - i : 2 * g.nx - 1 - i;
            if (kind == BC_REFLECTIVE) flip_x = R(-1);
        } else {
            if (kind == BC_PERIODIC) j = j < 0 ? j + g.ny : j - g.ny;
            else j = j < 0 ? -1 - j : 2 * g.ny - 1 - j;
            if (kind == BC_REFLECTIVE) flip_y = R(-1);
        }
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
    (void)flip_y;
#endif
    w.rho = rho;
    w.un = flip_x * vx;
    w.ut = flip_y * vy;
    w.p = (g.gamma - R(1)) * (g.u[VAR_E * ncell + c] - R(0.5) * rho * sum_of_squares(vx, vy));
    return w;
}

// Largest stable 1/dt of one cell from its conserved variables: (|vx| + c)/dx + (|vy| + c)/dy.
// A non-finite or non-physical cell gives an infinite rate, which stops the run.
DEVICE real cell_rate(real rho, real mx, real my, real energy, real gamma, real inv_dx,
                      real inv_dy)
{
    const real vx = mx / rho, vy = my / rho;
    const real p = (gamma - R(1)) * (energy - R(0.5) * rho * sum_of_squares(vx, vy));
    if (!(rho > R(0) && p > R(0))) return REAL_INF;
    const real a = sqrt(gamma * p / rho);
    real rate = (fabs(vx) + a) * inv_dx;
#if DIM == 2
    rate += (fabs(vy) + a) * inv_dy;
#else
    (void)inv_dy;
#endif
    return rate < REAL_INF ? rate : REAL_INF;
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

struct Gas {
    real gamma, inv_gm1;  // ratio of specific heats, 1 / (gamma - 1)
};

DEVICE Flux physical_flux(const Prim& w, real energy)
{
    Flux f;
    f.mass = w.rho * w.un;
    f.mom_n = f.mass * w.un + w.p;
    f.mom_t = f.mass * w.ut;
    f.energy = (energy + w.p) * w.un;
    return f;
}

DEVICE real total_energy(const Prim& w, const Gas& gas)
{
    return w.p * gas.inv_gm1 + R(0.5) * w.rho * (w.un * w.un + w.ut * w.ut);
}

#if RIEMANN == 1
// Rusanov (local Lax-Friedrichs).
DEVICE Flux riemann_flux(const Prim& l, const Prim& r, const Gas& gas)
{
    const real el = total_energy(l, gas), er = total_energy(r, gas);
    const Flux fl = physical_flux(l, el), fr = physical_flux(r, er);
    const real cl = sqrt(gas.gamma * l.p / l.rho), cr = sqrt(gas.gamma * r.p / r.rho);
    const real s = fmax(fabs(l.un) + cl, fabs(r.un) + cr);
    Flux f;
    f.mass = R(0.5) * (fl.mass + fr.mass) - R(0.5) * s * (r.rho - l.rho);
    f.mom_n = R(0.5) * (fl.mom_n + fr.mom_n) - R(0.5) * s * (r.rho * r.un - l.rho * l.un);
    f.mom_t = R(0.5) * (fl.mom_t + fr.mom_t) - R(0.5) * s * (r.rho * r.ut - l.rho * l.ut);
    f.energy = R(0.5) * (fl.energy + fr.energy) - R(0.5) * s * (er - el);
    return f;
}
#else
// HLLC flux of the star state on one side: w is that side's state, s its wave speed and
// m = rho (s - un) its mass flux relative to the wave.
DEVICE Flux hllc_star_flux(const Prim& w, real energy, real inv_rho, real s, real m, real s_star)
{
    const Flux f = physical_flux(w, energy);
    const real k = m / (s - s_star);
    Flux out;
    out.mass = f.mass + s * (k - w.rho);
    out.mom_n = f.mom_n + s * (k * s_star - w.rho * w.un);
    out.mom_t = f.mom_t + s * (k * w.ut - w.rho * w.ut);
    const real e_star = k * (energy * inv_rho + (s_star - w.un) * (s_star + w.p / m));
    out.energy = f.energy + s * (e_star - energy);
    return out;
}

// HLLC (Toro, Spruce and Speares 1994) with Davis wave-speed estimates.
DEVICE Flux riemann_flux(const Prim& l, const Prim& r, const Gas& gas)
{
    const real inv_rl = R(1) / l.rho, inv_rr = R(1) / r.rho;
    const real cl = sqrt(gas.gamma * l.p * inv_rl), cr = sqrt(gas.gamma * r.p * inv_rr);
    const real sl = fmin(l.un - cl, r.un - cr);
    const real sr = fmax(l.un + cl, r.un + cr);
    const real el = total_energy(l, gas), er = total_energy(r, gas);
    if (sl >= R(0)) return physical_flux(l, el);
    if (sr <= R(0)) return physical_flux(r, er);
    const real ml = l.rho * (sl - l.un), mr = r.rho * (sr - r.un);
    const real s_star = (r.p - l.p + l.un * ml - r.un * mr) / (ml - mr);
    // Select the upwind side's inputs, then evaluate one star flux: no divergent branch in a
    // warp whose faces see contacts moving both ways.
    const bool left = s_star >= R(0);
    return hllc_star_flux(left ? l : r, left ? el : er, left ? inv_rl : inv_rr, left ? sl : sr,
                          left ? ml : mr, s_star);
}
#endif

// Flux through the face between cells b and c; a and d are the next cells out.
DEVICE Flux face_flux(const Prim& a, const Prim& b, const Prim& c, const Prim& d, const Gas& gas)
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
    return riemann_flux(l, r, gas);
#else
    (void)a;
    (void)d;
    return riemann_flux(b, c, gas);
#endif
}

// Box entry k seen from a face normal to axis `dir` (0 x, 1 y).
DEVICE Prim box_prim(const real (*box)[BOX], int k, int dir)
{
    Prim w;
    w.rho = box[0][k];
    w.un = dir == 0 ? box[1][k] : box[2][k];
    w.ut = dir == 0 ? box[2][k] : box[1][k];
    w.p = box[3][k];
    return w;
}

// One Runge-Kutta stage, flux and update fused: out = (1 - w) u0 + w (u + dt L(u)), written
// as u0 + w (stage - u0) so that the weights sum to exactly 1 in `real` and the totals stay
// conserved to rounding (1/3 + 2/3 rounded to float is not 1). w == 1 (a first stage) does not
// read u0. Each block loads its cells' primitive states once into shared memory, computes
// every face flux once (both cells of a face use the same bits: conservation to rounding, and
// x <-> y symmetric problems stay symmetric to the bit), then updates its cells, reading each
// conserved variable of u (and u0) and writing each of out once. With write_rates it also
// leaves per block the largest stability rate of the new state in rates, for the next dt.
// dt == 0 means the run has reached its stop time: the stage writes nothing.
BLOCK_KERNEL void euler_stage(const real* __restrict__ u, const real* u0, real* out,
                              const real* __restrict__ dt_dev, const real* __restrict__ inflow,
                              real* __restrict__ rates, int nx, int ny, int bc_xlo, int bc_xhi,
                              int bc_ylo, int bc_yhi, real inv_dx, real inv_dy, real gamma,
                              real w, int write_rates)
{
    __shared__ real box[4][BOX];
    __shared__ real flux_x[NVAR][THREADS];
#if DIM == 2
    __shared__ real flux_y[NVAR][THREADS];
#endif
    __shared__ real cons[NVAR][THREADS];  // u (and u0) of each thread's own cell
    __shared__ real cons0[NVAR][THREADS];
    __shared__ real block_rates[THREADS];

    // Block-uniform values (the same in every thread, so they may live across barriers).
    const real dt = dt_dev[0];
    if (dt == R(0)) return;
    const real dt_dx = dt * inv_dx, dt_dy = dt * inv_dy;
    const int i0 = blockIdx.x * CELLS_X, j0 = blockIdx.y * CELLS_Y;
    Grid g;
    g.u = u;
    g.inflow = inflow;
    g.nx = nx;
    g.ny = ny;
    g.bc_xlo = bc_xlo;
    g.bc_xhi = bc_xhi;
    g.bc_ylo = bc_ylo;
    g.bc_yhi = bc_yhi;
    g.gamma = gamma;
    Gas gas;
    gas.gamma = gamma;
    gas.inv_gm1 = R(1) / (gamma - R(1));

    // Every global read of the stage: primitive states of the tile and its halo, and the
    // conserved variables of the thread's own cell (all loads in flight together).
    PHASE {
        for (int k = threadIdx.y * BLOCK_X + threadIdx.x; k < BOX; k += THREADS) {
            const Prim p = lab_prim(g, i0 - 2 + k % BOX_X, j0 - HALO_Y + k / BOX_X);
            box[0][k] = p.rho;
            box[1][k] = p.un;
            box[2][k] = p.ut;
            box[3][k] = p.p;
        }
        const int t = threadIdx.y * BLOCK_X + threadIdx.x;
        const int i = i0 + threadIdx.x, j = j0 + threadIdx.y;
        if (threadIdx.x < CELLS_X && threadIdx.y < CELLS_Y && i < nx && j < ny) {
            const int ncell = nx * ny, c = j * nx + i;
            for (int v = 0; v < NVAR; ++v) {
                cons[v][t] = u[v * ncell + c];
                if (w != R(1)) cons0[v][t] = u0[v * ncell + c];
            }
        }
    }
    __syncthreads();

    // Fluxes through the low x (and y) face of each thread's cell, times dt/dx (dt/dy).
    PHASE {
        const int t = threadIdx.y * BLOCK_X + threadIdx.x;
        const int k = (threadIdx.y + HALO_Y) * BOX_X + threadIdx.x + 2;
        if (threadIdx.y < CELLS_Y) {
            const Flux f = face_flux(box_prim(box, k - 2, 0), box_prim(box, k - 1, 0),
                                     box_prim(box, k, 0), box_prim(box, k + 1, 0), gas);
            flux_x[0][t] = f.mass * dt_dx;
            flux_x[1][t] = f.mom_n * dt_dx;
#if DIM == 2
            flux_x[2][t] = f.mom_t * dt_dx;
#endif
            flux_x[VAR_E][t] = f.energy * dt_dx;
        }
#if DIM == 2
        if (threadIdx.x < CELLS_X) {
            const Flux f = face_flux(box_prim(box, k - 2 * BOX_X, 1), box_prim(box, k - BOX_X, 1),
                                     box_prim(box, k, 1), box_prim(box, k + BOX_X, 1), gas);
            flux_y[0][t] = f.mass * dt_dy;
            flux_y[1][t] = f.mom_t * dt_dy;
            flux_y[2][t] = f.mom_n * dt_dy;
            flux_y[3][t] = f.energy * dt_dy;
        }
#else
        (void)dt_dy;
#endif
    }
    __syncthreads();

    // Update the tile's cells.
    PHASE {
        const int t = threadIdx.y * BLOCK_X + threadIdx.x;
        const int i = i0 + threadIdx.x, j = j0 + threadIdx.y;
        real rate = R(0);
        if (threadIdx.x < CELLS_X && threadIdx.y < CELLS_Y && i < nx && j < ny) {
            const int ncell = nx * ny, c = j * nx + i;
            real next[NVAR];
            for (int v = 0; v < NVAR; ++v) {
                real change = flux_x[v][t] - flux_x[v][t + 1];
#if DIM == 2
                change = change + (flux_y[v][t] - flux_y[v][t + BLOCK_X]);
#endif
                const real stage = cons[v][t] + change;
                next[v] = w == R(1) ? stage : cons0[v][t] + w * (stage - cons0[v][t]);
                out[v * ncell + c] = next[v];
            }
#if DIM == 2
            const real my = next[2];
#else
            const real my = R(0);
#endif
            if (write_rates)
                rate = cell_rate(next[0], next[1], my, next[VAR_E], gamma, inv_dx, inv_dy);
        }
        block_rates[t] = rate;
    }
    if (write_rates) {
        block_max(block_rates);
        PHASE {
            if (threadIdx.x == 0 && threadIdx.y == 0)
                rates[blockIdx.y * gridDim.x + blockIdx.x] = block_rates[0];
        }
    }
}

// Per block, the largest stability rate over its cells (grid-stride); a state set from the
// host gets its first dt from this, later steps from the last stage's write_rates.
BLOCK_KERNEL void euler_max_rate(const real* __restrict__ u, real* __restrict__ rates, int nx,
                                 int ny, real inv_dx, real inv_dy, real gamma)
{
    __shared__ real s[256];
    PHASE {
        const int ncell = nx * ny;
        real m = R(0);
        for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < ncell;
             c += blockDim.x * gridDim.x) {
#if DIM == 2
            const real my = u[2 * ncell + c];
#else
            const real my = R(0);
#endif
            m = fmax(m, cell_rate(u[c], u[ncell + c], my, u[VAR_E * ncell + c], gamma, inv_dx,
                                  inv_dy));
        }
        s[threadIdx.x] = m;
    }
    block_max(s);
    PHASE {
        if (threadIdx.x == 0) rates[blockIdx.x] = s[0];
    }
}
