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
// the lab frame (the shared-memory arrays of a stage block): un = vx, ut = vy.
struct Prim {
    real rho, un, ut, p;
};

// Flux through a face, in the same frame.
struct Flux {
    real mass, mom_n, mom_t, energy;
};

// The tile of cells a stage block updates, one thread per cell, and the shared-memory arrays
// of its phases, each indexed by tile coordinates (cx, cy) of the cell (or of the cell above a
// face: face cx is the low x face of cell cx):
//   box    primitive states of the tile and two halo layers     cx -2 .. TILE_X + 1, cy -2 ..
//   x_lo, x_hi  the reconstructed states at a cell's low and high x faces, for the tile's
//          rows and one halo column each side                     cx -1 .. TILE_X, cy 0 ..
//   y_lo, y_hi  the same in y                                     cx 0 .., cy -1 .. TILE_Y
//   flux_x, flux_y  the tile's faces, times dt/dx (dt/dy)         cx 0 .. TILE_X, cy 0 ..
// (the fluxes reuse the box's memory: the box is not read after the face states are made)
// A block's static shared memory is at most 48 KiB: fp64 tiles are half as tall.
#if DIM == 2
#define TILE_X 32
#define TILE_Y (REAL_BITS == 32 ? 8 : 4)
#define HALO_Y 2
#else
#define TILE_X 256
#define TILE_Y 1
#define HALO_Y 0
#endif
#define THREADS (TILE_X * TILE_Y)
#define BOX_X (TILE_X + 4)
#define BOX (BOX_X * (TILE_Y + 2 * HALO_Y))
#define BOX_AT(cx, cy) (((cy) + HALO_Y) * BOX_X + (cx) + 2)
#define X_STATES (TILE_Y * (TILE_X + 2))
#define X_STATE_AT(cx, cy) ((cy) * (TILE_X + 2) + (cx) + 1)
#define X_FACES (TILE_Y * (TILE_X + 1))
#define X_FACE_AT(cx, cy) ((cy) * (TILE_X + 1) + (cx))
#if DIM == 2
#define Y_STATES ((TILE_Y + 2) * TILE_X)
#define Y_STATE_AT(cx, cy) (((cy) + 1) * TILE_X + (cx))
#define Y_FACES ((TILE_Y + 1) * TILE_X)
#define Y_FACE_AT(cx, cy) ((cy) * TILE_X + (cx))
#endif

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

// Primitive state of stored cell c in the lab frame, its velocity components times flip_x and
// flip_y (-1 mirrors them at a wall).
DEVICE Prim cell_prim(const real* u, int ncell, int c, real flip_x, real flip_y, real gamma)
{
    Prim w;
    const real rho = u[c];
    const real inv_rho = approx_recip(rho);
    const real vx = u[ncell + c] * inv_rho;
#if DIM == 2
    const real vy = u[2 * ncell + c] * inv_rho;
#else
    const real vy = R(0);
    (void)flip_y;
#endif
    w.rho = rho;
    w.un = flip_x * vx;
    w.ut = flip_y * vy;
    w.p = (gamma - R(1)) * (u[VAR_E * ncell + c] - R(0.5) * rho * sum_of_squares(vx, vy));
    return w;
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
    return cell_prim(g.u, g.nx * g.ny, j * g.nx + i, flip_x, flip_y, g.gamma);
}

// Largest stable 1/dt of one cell from its conserved variables: (|vx| + c)/dx + (|vy| + c)/dy.
// A non-finite or non-physical cell gives an infinite rate, which stops the run.
DEVICE real cell_rate(real rho, real mx, real my, real energy, real gamma, real inv_dx,
                      real inv_dy)
{
    const real inv_rho = approx_recip(rho);
    const real vx = mx * inv_rho, vy = my * inv_rho;
    const real p = (gamma - R(1)) * (energy - R(0.5) * rho * sum_of_squares(vx, vy));
    if (!(rho > R(0) && p > R(0))) return REAL_INF;
    const real a = approx_sqrt(gamma * p * inv_rho);
    real rate = (fabs(vx) + a) * inv_dx;
#if DIM == 2
    rate += (fabs(vy) + a) * inv_dy;
#else
    (void)inv_dy;
#endif
    return rate < REAL_INF ? rate : REAL_INF;
}

// Half the limited slope of a cell from its differences to the left (dl) and right (dr)
// neighbours: face value = cell value +- this. Zero at an extremum (dl * dr <= 0).
#if RECONSTRUCTION == 1
DEVICE real half_slope(real dl, real dr)
{
    (void)dl;
    (void)dr;
    return R(0);
}
#elif LIMITER == 1
DEVICE real half_slope(real dl, real dr)
{
    // sign(dl) dr < 0 (opposite signs) gives 0 through the max.
    const real sign = copysign(R(1), dl);
    return sign * R(0.5) * fmax(R(0), fmin(fabs(dl), sign * dr));
}
#elif LIMITER == 2
DEVICE real half_slope(real dl, real dr)
{
    if (dl * dr <= R(0)) return R(0);
    return dl * dr / (dl + dr);
}
#else
DEVICE real half_slope(real dl, real dr)
{
    // sign(dl) dr < 0 (opposite signs) gives 0 through the max.
    const real sign = copysign(R(1), dl);
    return sign * fmax(R(0), fmin(fmin(fabs(dl), sign * dr), R(0.25) * fabs(dl + dr)));
}
#endif

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

// sqrt(gamma p / rho), as gamma p / sqrt(gamma p rho): one approximate reciprocal square root.
DEVICE real sound_speed(const Prim& w, const Gas& gas)
{
    const real gp = gas.gamma * w.p;
    return gp * approx_rsqrt(gp * w.rho);
}

#if RIEMANN == 1
// Rusanov (local Lax-Friedrichs).
DEVICE Flux riemann_flux(const Prim& l, const Prim& r, const Gas& gas)
{
    const real el = total_energy(l, gas), er = total_energy(r, gas);
    const Flux fl = physical_flux(l, el), fr = physical_flux(r, er);
    const real s = fmax(fabs(l.un) + sound_speed(l, gas), fabs(r.un) + sound_speed(r, gas));
    Flux f;
    f.mass = R(0.5) * (fl.mass + fr.mass) - R(0.5) * s * (r.rho - l.rho);
    f.mom_n = R(0.5) * (fl.mom_n + fr.mom_n) - R(0.5) * s * (r.rho * r.un - l.rho * l.un);
    f.mom_t = R(0.5) * (fl.mom_t + fr.mom_t) - R(0.5) * s * (r.rho * r.ut - l.rho * l.ut);
    f.energy = R(0.5) * (fl.energy + fr.energy) - R(0.5) * s * (er - el);
    return f;
}
#else
// HLLC (Toro, Spruce and Speares 1994) with Davis wave-speed estimates. The flux of the side
// K whose state the face sees (the upwind side of the contact, or of the whole fan when it is
// supersonic); in the star region F*_K = F_K + S_K (U*_K - U_K) with, for m = rho (S_K - un)
// and q = 1 / (S_K - S*), U*_K = q (m, m S*, m ut, (S_K - un) E + (S* - un)(m S* + p)).
DEVICE Flux riemann_flux(const Prim& l, const Prim& r, const Gas& gas)
{
    const real cl = sound_speed(l, gas), cr = sound_speed(r, gas);
    const real sl = fmin(l.un - cl, r.un - cr);
    const real sr = fmax(l.un + cl, r.un + cr);
    const real ml = l.rho * (sl - l.un), mr = r.rho * (sr - r.un);
    const real s_star = (r.p - l.p + l.un * ml - r.un * mr) * approx_recip(ml - mr);
    // Select the side's inputs, then evaluate one flux: no divergent branch in a warp whose
    // faces see contacts moving both ways.
    const bool left = sl >= R(0) || (sr > R(0) && s_star >= R(0));
    const Prim w = left ? l : r;
    const real energy = total_energy(w, gas);
    Flux f = physical_flux(w, energy);
    if (sl < R(0) && sr > R(0)) {
        const real s = left ? sl : sr, m = left ? ml : mr;
        const real q = approx_recip(s - s_star);
        const real e_star = q * ((s - w.un) * energy + (s_star - w.un) * (m * s_star + w.p));
        f.mom_n = f.mom_n + s * (m * q * s_star - f.mass);
        f.mass = f.mass + s * (m * q - w.rho);
        f.mom_t = f.mass * w.ut;
        f.energy = f.energy + s * (e_star - energy);
    }
    return f;
}
#endif

// The reconstructed states at the low and high faces of the box cell k along the axis whose
// neighbours are `stride` entries away, stored at entry s of lo and hi.
template <int N>
DEVICE void reconstruct(const real (*box)[BOX], int k, int stride, real (*lo)[N], real (*hi)[N],
                        int s)
{
    for (int v = 0; v < 4; ++v) {
        const real b = box[v][k];
        const real h = half_slope(b - box[v][k - stride], box[v][k + stride] - b);
        lo[v][s] = b - h;
        hi[v][s] = b + h;
    }
}

// Entry k of a lab-frame state array seen from a face normal to axis `dir` (0 x, 1 y).
template <int N>
DEVICE Prim face_state(const real (*states)[N], int k, int dir)
{
    Prim w;
    w.rho = states[0][k];
    w.un = dir == 0 ? states[1][k] : states[2][k];
    w.ut = dir == 0 ? states[2][k] : states[1][k];
    w.p = states[3][k];
    return w;
}

// The flux through the face between state `left` of the high-side array and state `right` of
// the low-side array, along axis dir, times dt/dx, stored in the lab frame at entry f of flux.
template <int N, int F>
DEVICE void face_flux(const real (*hi)[N], int left, const real (*lo)[N], int right, int dir,
                      const Gas& gas, real dt_dx, real (*flux)[F], int f)
{
    const Flux g = riemann_flux(face_state(hi, left, dir), face_state(lo, right, dir), gas);
    flux[0][f] = g.mass * dt_dx;
#if DIM == 2
    flux[1][f] = (dir == 0 ? g.mom_n : g.mom_t) * dt_dx;
    flux[2][f] = (dir == 0 ? g.mom_t : g.mom_n) * dt_dx;
#else
    flux[1][f] = g.mom_n * dt_dx;
#endif
    flux[VAR_E][f] = g.energy * dt_dx;
}

// One Runge-Kutta stage, flux and update fused: out = (1 - w) u0 + w (u + dt L(u)), written
// as u0 + w (stage - u0) so that the weights sum to exactly 1 in `real` and the totals stay
// conserved to rounding (1/3 + 2/3 rounded to float is not 1). w == 1 (a first stage) does not
// read u0. A block loads its tile's primitive states once into shared memory, reconstructs
// each cell's face states once, computes every face flux once (both cells of a face use the
// same bits: conservation to rounding, and x <-> y symmetric problems stay symmetric to the
// bit), then updates its cells, writing each conserved variable of out once. The update loads
// its own cell's u again (lines the tile load has just fetched, so mostly cache hits) and u0
// (prefetched into L2 at the start). With write_rates it also leaves per block the largest
// stability rate of the new state in rates, for the next dt. dt == 0 means the run has reached
// its stop time: the stage writes nothing.
BLOCK_KERNEL void euler_stage(const real* __restrict__ u, const real* u0, real* out,
                              const real* __restrict__ dt_dev, const real* __restrict__ inflow,
                              real* __restrict__ rates, int nx, int ny, int bc_xlo, int bc_xhi,
                              int bc_ylo, int bc_yhi, real inv_dx, real inv_dy, real gamma,
                              real inv_gm1, real w, int write_rates)
{
    __shared__ union {
        real box[4][BOX];
        struct {
            real x[NVAR][X_FACES];
#if DIM == 2
            real y[NVAR][Y_FACES];
#endif
        } flux;
    } scratch;
    __shared__ real x_lo[4][X_STATES], x_hi[4][X_STATES];
#if DIM == 2
    __shared__ real y_lo[4][Y_STATES], y_hi[4][Y_STATES];
#endif
    real(*box)[BOX] = scratch.box;
    real(*flux_x)[X_FACES] = scratch.flux.x;
#if DIM == 2
    real(*flux_y)[Y_FACES] = scratch.flux.y;
#endif
    __shared__ real block_rates[THREADS];

    // Block-uniform values (the same in every thread, so they may live across barriers).
    const real dt = dt_dev[0];
    if (dt == R(0)) return;
    const real dt_dx = dt * inv_dx, dt_dy = dt * inv_dy;
    const int i0 = blockIdx.x * TILE_X, j0 = blockIdx.y * TILE_Y;
    const int ncell = nx * ny;
    // A tile whose box lies inside the grid reads its states without boundary mapping.
    const bool inside = i0 >= 2 && i0 + TILE_X + 2 <= nx &&
                        (DIM == 1 || (j0 >= 2 && j0 + TILE_Y + 2 <= ny));
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
    gas.inv_gm1 = inv_gm1;

    // Primitive states of the tile and its halo. A later stage also reads u0 of its cells in
    // the update: start fetching it now, so that the update does not wait on memory.
    PHASE {
        const int own_i = i0 + threadIdx.x, own_j = j0 + threadIdx.y;
        if (w != R(1) && own_i < nx && own_j < ny)
            for (int v = 0; v < NVAR; ++v) prefetch_l2(u0 + v * ncell + own_j * nx + own_i);
        for (int k = threadIdx.y * TILE_X + threadIdx.x; k < BOX; k += THREADS) {
            const int i = i0 - 2 + k % BOX_X, j = j0 - HALO_Y + k / BOX_X;
            const Prim p = inside ? cell_prim(u, ncell, j * nx + i, R(1), R(1), gamma)
                                  : lab_prim(g, i, j);
            box[0][k] = p.rho;
            box[1][k] = p.un;
            box[2][k] = p.ut;
            box[3][k] = p.p;
        }
    }
    __syncthreads();

    // Face states of every cell whose faces the tile needs: each thread's own cell along both
    // axes, then the halo rows (y) and columns (x), a warp-uniform kind of work per warp.
    PHASE {
        const int cx = threadIdx.x, cy = threadIdx.y;
        reconstruct(box, BOX_AT(cx, cy), 1, x_lo, x_hi, X_STATE_AT(cx, cy));
#if DIM == 2
        reconstruct(box, BOX_AT(cx, cy), BOX_X, y_lo, y_hi, Y_STATE_AT(cx, cy));
        int h = threadIdx.y * TILE_X + threadIdx.x;
        if (h < 2 * TILE_X) {
            const int hx = h % TILE_X, hy = h < TILE_X ? -1 : TILE_Y;
            reconstruct(box, BOX_AT(hx, hy), BOX_X, y_lo, y_hi, Y_STATE_AT(hx, hy));
        }
        h -= 2 * TILE_X;
#else
        const int h = threadIdx.x;
#endif
        if (h >= 0 && h < 2 * TILE_Y) {
            const int hx = h < TILE_Y ? -1 : TILE_X, hy = h % TILE_Y;
            reconstruct(box, BOX_AT(hx, hy), 1, x_lo, x_hi, X_STATE_AT(hx, hy));
        }
    }
    __syncthreads();

    // Fluxes through the low x (and y) face of each thread's cell, then the tile's high faces.
    PHASE {
        const int cx = threadIdx.x, cy = threadIdx.y;
        face_flux(x_hi, X_STATE_AT(cx - 1, cy), x_lo, X_STATE_AT(cx, cy), 0, gas, dt_dx, flux_x,
                  X_FACE_AT(cx, cy));
#if DIM == 2
        face_flux(y_hi, Y_STATE_AT(cx, cy - 1), y_lo, Y_STATE_AT(cx, cy), 1, gas, dt_dy, flux_y,
                  Y_FACE_AT(cx, cy));
        int h = threadIdx.y * TILE_X + threadIdx.x;
        if (h < TILE_X)
            face_flux(y_hi, Y_STATE_AT(h, TILE_Y - 1), y_lo, Y_STATE_AT(h, TILE_Y), 1, gas,
                      dt_dy, flux_y, Y_FACE_AT(h, TILE_Y));
        h -= TILE_X;
#else
        (void)dt_dy;
        const int h = threadIdx.x;
#endif
        if (h >= 0 && h < TILE_Y)
            face_flux(x_hi, X_STATE_AT(TILE_X - 1, h), x_lo, X_STATE_AT(TILE_X, h), 0, gas,
                      dt_dx, flux_x, X_FACE_AT(TILE_X, h));
    }
    __syncthreads();

    // Update the tile's cells.
    PHASE {
        const int t = threadIdx.y * TILE_X + threadIdx.x;
        const int cx = threadIdx.x, cy = threadIdx.y;
        const int i = i0 + cx, j = j0 + cy;
        real rate = R(0);
        if (i < nx && j < ny) {
            const int c = j * nx + i;
            real next[NVAR];
            for (int v = 0; v < NVAR; ++v) {
                real change = flux_x[v][X_FACE_AT(cx, cy)] - flux_x[v][X_FACE_AT(cx + 1, cy)];
#if DIM == 2
                change = change + (flux_y[v][Y_FACE_AT(cx, cy)] - flux_y[v][Y_FACE_AT(cx, cy + 1)]);
#endif
                const real stage = u[v * ncell + c] + change;
                if (w == R(1)) {
                    next[v] = stage;
                } else {
                    const real start = u0[v * ncell + c];
                    next[v] = start + w * (stage - start);
                }
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
