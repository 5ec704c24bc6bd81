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

// A stage block marches up a strip of the grid MARCH_W columns wide, one thread per column:
// the strip updates the MARCH_W - 4 columns between two halo columns on each side (a halo
// column's thread loads and reconstructs, so that its neighbours have their faces, but writes
// nothing), and `rows` rows (a launch argument). The shared-memory arrays hold one row each.
#define MARCH_W 128
#define MARCH_CELLS (MARCH_W - 4)

// Boundary kinds are separate members, not an array: a runtime index into an array would put
// the whole struct in (slow) local memory.
struct Grid {
    const real* u;
    const real* inflow;  // per side (x_lo, x_hi, y_lo, y_hi): rho, vx, vy, p
    int nx, ny;
    int bc_xlo, bc_xhi, bc_ylo, bc_yhi;
    real gamma;
};

// a^2 + b^2 rounded the same way for (a, b) and (b, a), to keep x <-> y symmetric problems
// symmetric to the bit: the terms ordered by magnitude, and one fixed FMA.
DEVICE real sum_of_squares(real a, real b)
{
    const real lo = fmin(fabs(a), fabs(b)), hi = fmax(fabs(a), fabs(b));
    return fma(hi, hi, lo * lo);
}

// Primitive state in the lab frame of a cell with conserved variables cons, its velocity
// components times flip_x and flip_y (-1 mirrors them at a wall).
DEVICE Prim conserved_prim(const real cons[NVAR], real flip_x, real flip_y, real gamma)
{
    Prim w;
    const real rho = cons[0];
    const real inv_rho = approx_recip(rho);
    const real vx = cons[1] * inv_rho;
#if DIM == 2
    const real vy = cons[2] * inv_rho;
#else
    const real vy = R(0);
    (void)flip_y;
#endif
    w.rho = rho;
    w.un = flip_x * vx;
    w.ut = flip_y * vy;
    w.p = (gamma - R(1)) * (cons[VAR_E] - R(0.5) * rho * sum_of_squares(vx, vy));
    return w;
}

// The conserved variables of stored cell c (a pointer step a variable: fewer integer
// instructions than an index product each).
DEVICE void load_cell(const real* u, int ncell, int c, real cons[NVAR])
{
    const real* p = u + c;
    for (int v = 0; v < NVAR; ++v, p += ncell) cons[v] = *p;
}

// Primitive state of stored cell c (see conserved_prim).
DEVICE Prim cell_prim(const real* u, int ncell, int c, real flip_x, real flip_y, real gamma)
{
    real cons[NVAR];
    load_cell(u, ncell, c, cons);
    return conserved_prim(cons, flip_x, flip_y, gamma);
}

// Primitive state of cell (i, j) in the lab frame (un = vx, ut = vy). The cell may be
// a ghost cell of one side: its index is mapped through that side's boundary, and a wall
// mirrors the velocity normal to it. Cells outside every side's two ghost layers (only
// corners and the far end of a partial strip) are never used; they get a harmless state.
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
    // Without a branch: a NaN anywhere fails the comparisons.
    const real a = approx_sqrt(gamma * p * inv_rho);
    real rate = (fabs(vx) + a) * inv_dx;
#if DIM == 2
    rate += (fabs(vy) + a) * inv_dy;
#else
    (void)inv_dy;
#endif
    return rho > R(0) && p > R(0) && rate < REAL_INF ? rate : REAL_INF;
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

// The face fluxes below are inlined twice in a stage kernel (x and y faces), and their inputs
// reach the two copies in different orders. Left to the compiler, a sum of two products a b + c d
// may become an FMA of either product, chosen differently in the two copies: a symmetric problem
// would lose its x <-> y symmetry. So every such sum is written with an explicit fma, and
// un^2 + ut^2 through sum_of_squares.
DEVICE real total_energy(const Prim& w, const Gas& gas)
{
    return fma(w.p, gas.inv_gm1, R(0.5) * w.rho * sum_of_squares(w.un, w.ut));
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
    const real ml = l.rho * l.un, mr = r.rho * r.un;  // mass fluxes
    const real hs = R(0.5) * fmax(fabs(l.un) + sound_speed(l, gas),
                                  fabs(r.un) + sound_speed(r, gas));
    // F = (F_L + F_R) / 2 - hs (U_R - U_L), component by component.
    Flux f;
    f.mass = fma(-hs, r.rho - l.rho, R(0.5) * fma(l.rho, l.un, mr));
    f.mom_n = fma(-hs, fma(r.rho, r.un, -ml),
                  R(0.5) * (fma(ml, l.un, l.p) + fma(mr, r.un, r.p)));
    f.mom_t = fma(-hs, fma(r.rho, r.ut, -(l.rho * l.ut)), R(0.5) * fma(ml, l.ut, mr * r.ut));
    f.energy = fma(-hs, er - el, R(0.5) * fma(el + l.p, l.un, (er + r.p) * r.un));
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
    const real s_star = (fma(l.un, ml, r.p - l.p) - r.un * mr) * approx_recip(ml - mr);
    // Select the side's inputs, then evaluate one flux and its star-region correction, and
    // select again: no branch (a divergent one in a warp whose faces see contacts moving both
    // ways; in smooth subsonic flow every face takes the correction anyway).
    const bool left = sl >= R(0) || (sr > R(0) && s_star >= R(0));
    const Prim w = left ? l : r;
    const real energy = total_energy(w, gas);
    const Flux f = physical_flux(w, energy);
    const real s = left ? sl : sr, m = left ? ml : mr;
    const real q = approx_recip(s - s_star);
    const real e_star = q * fma(s - w.un, energy, (s_star - w.un) * fma(m, s_star, w.p));
    Flux g;
    g.mom_n = f.mom_n + s * fma(m * q, s_star, -f.mass);
    g.mass = fma(s, m * q - w.rho, f.mass);
    g.mom_t = g.mass * w.ut;
    g.energy = fma(s, e_star - energy, f.energy);
    return sl < R(0) && sr > R(0) ? g : f;
}
#endif

// Primitive state of cell (i, j) in the lab frame: rows 0 .. stored_rows - 1 straight from u
// (stored_rows is 0 where the strip reaches past the grid in x), any other cell through
// lab_prim's boundary mapping.
DEVICE Prim load_prim(const Grid& g, int stored_rows, int i, int j)
{
    if (j >= 0 && j < stored_rows)
        return cell_prim(g.u, g.nx * g.ny, j * g.nx + i, R(1), R(1), g.gamma);
    return lab_prim(g, i, j);
}

// Half the limited slopes of cell `here` along the axis on which `below` and `above` are its
// neighbours (lab frame, variable by variable): its faces' states are here -+ these.
DEVICE Prim half_slopes(const Prim& below, const Prim& here, const Prim& above)
{
    Prim h;
    h.rho = half_slope(here.rho - below.rho, above.rho - here.rho);
    h.un = half_slope(here.un - below.un, above.un - here.un);
    h.ut = half_slope(here.ut - below.ut, above.ut - here.ut);
    h.p = half_slope(here.p - below.p, above.p - here.p);
    return h;
}

// The state at a cell's low face (sign -1) or high face (sign 1) from its half slopes h.
DEVICE Prim face_state(const Prim& here, const Prim& h, int sign)
{
    Prim w;
    w.rho = sign > 0 ? here.rho + h.rho : here.rho - h.rho;
    w.un = sign > 0 ? here.un + h.un : here.un - h.un;
    w.ut = sign > 0 ? here.ut + h.ut : here.ut - h.ut;
    w.p = sign > 0 ? here.p + h.p : here.p - h.p;
    return w;
}

// A lab-frame state seen from a face normal to axis dir (0 x, 1 y).
DEVICE Prim along(const Prim& lab, int dir)
{
    Prim w = lab;
    if (dir == 1) {
        w.un = lab.ut;
        w.ut = lab.un;
    }
    return w;
}

// The flux through the face between lab-frame states `left` and `right` along axis dir, times
// dt/dx (dt/dy), in the lab frame.
DEVICE void lab_flux(const Prim& left, const Prim& right, int dir, const Gas& gas, real dt_dx,
                     real f[NVAR])
{
    const Flux g = riemann_flux(along(left, dir), along(right, dir), gas);
    f[0] = g.mass * dt_dx;
#if DIM == 2
    f[1] = (dir == 0 ? g.mom_n : g.mom_t) * dt_dx;
    f[2] = (dir == 0 ? g.mom_t : g.mom_n) * dt_dx;
#else
    f[1] = g.mom_n * dt_dx;
#endif
    f[VAR_E] = g.energy * dt_dx;
}

// Two values that move between a thread and shared memory in one access.
struct alignas(2 * sizeof(real)) Pair {
    real a, b;
};
#define FLUX_PAIRS ((NVAR + 1) / 2)

DEVICE void store_prim(Pair (*row)[MARCH_W + 2], int t, const Prim& w)
{
    row[0][t] = Pair{w.rho, w.un};
    row[1][t] = Pair{w.ut, w.p};
}

DEVICE Prim shared_prim(const Pair (*row)[MARCH_W + 2], int t)
{
    const Pair first = row[0][t], second = row[1][t];
    Prim w;
    w.rho = first.a;
    w.un = first.b;
    w.ut = second.a;
    w.p = second.b;
    return w;
}

// A face flux in shared memory, variable v in pair v / 2 (1D pads the last pair).
DEVICE void store_flux(Pair (*row)[MARCH_W], int t, const real f[NVAR])
{
    for (int k = 0; k < FLUX_PAIRS; ++k)
        row[k][t] = Pair{f[2 * k], 2 * k + 1 < NVAR ? f[2 * k + 1] : R(0)};
}

// The buffers of a Runge-Kutta stage, by role: the state alternates between two buffers
// (state_a, state_b). finish_dt flipped `parity` when the step began, so U^n is in the buffer
// parity does not name and U^(n+1) goes to the one it names; scratch holds an intermediate
// stage. No stage writes a buffer it reads: written in place over U^n, the last stage of an
// SSP-RK3 step took 11% longer on an H200.
#define ROLE_OLD 0      // U^n
#define ROLE_NEW 1      // U^(n+1), and the first stage of SSP-RK3
#define ROLE_SCRATCH 2  // the other intermediate stage
DEVICE real* stage_buffer(int role, int parity, real* state_a, real* state_b, real* scratch)
{
    if (role == ROLE_SCRATCH) return scratch;
    return (role == ROLE_NEW) == (parity != 0) ? state_b : state_a;
}

// What a stage thread carries up its column from row to row (registers on the GPU).
struct Column {
#if DIM == 2
    Prim here, above;          // rows r and r + 1 of the column
    Prim top;                  // row r - 1 reconstructed at its high y face
    real next[NVAR];           // u of row r + 1, loaded a step early (strips inside in x)
    real y_lo[NVAR], y_hi[NVAR];  // y fluxes (times dt/dy) through row r - 1's low, high faces
#endif
    Prim below;                // row r - 1, the row the block updates in step r
    Prim x_lo;                 // row r - 1 reconstructed at its low x face
    real old[NVAR], start[NVAR];  // u and u0 of the column's cell in row r - 1
    real rate;                 // largest stability rate of the cells updated so far
};

// One Runge-Kutta stage, flux and update fused: out = (1 - w) u0 + w (u + dt L(u)), with u
// and out the buffers of roles u_role and out_role and u0 = U^n (see stage_buffer), written
// as u0 + w (stage - u0) so that the weights sum to exactly 1 in `real` and the totals stay
// conserved to rounding (1/3 + 2/3 rounded to float is not 1). w == 1 (a first stage) does not
// read u0. In step r of its march a block
//   - loads row r + 1 (each thread its column's cell, as primitive states), reconstructs row r
//     in y from rows r - 1, r, r + 1 and computes the y flux through the face between rows
//     r - 1 and r, all in the thread's registers;
//   - then reconstructs row r - 1 in x and computes its x fluxes through shared memory, and
//     updates row r - 1, writing each conserved variable of out once.
// So every cell of the strip's rows (and two rows each side) is loaded and reconstructed once
// and every face flux computed once (both cells of a face use the same bits: conservation to
// rounding, and x <-> y symmetric problems stay symmetric to the bit). Instruction issue and
// load latency, not DRAM bandwidth, limit this kernel, so its loads start early: the states of
// row r + 2 are loaded into registers in step r (in strips inside the grid in x), and the u
// and u0 of row r - 1 that the update needs in step r before the block turns to the x
// direction (u again: a line fetched three steps before). With write_rates it also leaves per
// block the largest stability rate of the new state in rates, for the next dt. dt == 0 means
// the run has reached its stop time: the stage writes nothing. Registers are capped so that
// 8 blocks (32 warps) share a multiprocessor in fp32 (the fastest cap on an H200; 4 blocks in
// fp64).
#define STAGE_BLOCKS_PER_SM (REAL_BITS == 32 ? 8 : 4)
BLOCK_KERNEL LAUNCH_BOUNDS(MARCH_W, STAGE_BLOCKS_PER_SM)
void euler_stage(real* state_a, real* state_b, real* scratch, const int* __restrict__ parity,
                 int u_role, int out_role, const real* __restrict__ dt_dev,
                 const real* __restrict__ inflow, real* __restrict__ rates, int nx, int ny,
                 int rows, int bc_xlo, int bc_xhi, int bc_ylo, int bc_yhi, real inv_dx,
                 real inv_dy, real gamma, real inv_gm1, real w, int write_rates)
{
    // Thread t's entry of row_prim and row_hi is t + 1: thread t reads its neighbours' at t and
    // t + 2, and the edge threads (whose x states are not used) read a pad, not a clamped
    // index (the selects were 1% of the march loop's instructions).
    __shared__ Pair row_prim[2][MARCH_W + 2], row_hi[2][MARCH_W + 2];
    __shared__ Pair row_flux[FLUX_PAIRS][MARCH_W];
    __shared__ real block_rates[MARCH_W];
    THREAD_STATE(Column, col);

    // The pads hold a harmless state, so that no thread reads uninitialized memory.
    PHASE {
        if (threadIdx.x < 2) {
            const int pad = threadIdx.x == 0 ? 0 : MARCH_W + 1;
            const Prim rest = {R(1), R(0), R(0), R(1)};
            store_prim(row_prim, pad, rest);
            store_prim(row_hi, pad, rest);
        }
    }
    __syncthreads();

    // Block-uniform values (the same in every thread, so they may live across barriers).
    const real dt = dt_dev[0];
    if (dt == R(0)) return;
    const int step_parity = parity[0];
    const real* __restrict__ u = stage_buffer(u_role, step_parity, state_a, state_b, scratch);
    const real* u0 = stage_buffer(ROLE_OLD, step_parity, state_a, state_b, scratch);
    real* out = stage_buffer(out_role, step_parity, state_a, state_b, scratch);
    const real dt_dx = dt * inv_dx, dt_dy = dt * inv_dy;
    const bool blend = w != R(1);  // the stage reads u0
    const int i0 = (int)blockIdx.x * MARCH_CELLS - 2;  // the column of thread 0
    const int j0 = (int)blockIdx.y * rows;                // rows j0 .. j1 - 1 are updated
    const int j1 = j0 + rows < ny ? j0 + rows : ny;
    const int ncell = nx * ny;
    const bool inside_x = i0 >= 0 && i0 + MARCH_W <= nx;
    // Rows below stored_rows are read straight from u; any other through lab_prim (one
    // compare a row instead of two).
    const int stored_rows = inside_x ? ny : 0;
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

    // The two rows below the strip start the march (1D: the one row is loaded in its step).
#if DIM == 2
    PHASE {
        const int i = i0 + (int)threadIdx.x;
        MY(col).here = load_prim(g, stored_rows, i, j0 - 2);
        MY(col).above = load_prim(g, stored_rows, i, j0 - 1);
        if (inside_x) load_cell(u, ncell, j0 * nx + i, MY(col).next);
        MY(col).rate = R(0);
    }
    const int first = j0 - 1;
#else
    (void)dt_dy;
    PHASE { MY(col).rate = R(0); }
    const int first = j0 + 1;
#endif
    for (int r = first; r <= j1; ++r) {
        // Along y in registers; row r - 1 published for the x direction. Row r + 2 is loaded
        // for the next step, and the u (and u0) of row r - 1 that the update needs now, to
        // arrive while the block treats the x direction.
        PHASE {
            Column& c = MY(col);
            const int i = i0 + (int)threadIdx.x;
#if DIM == 2
            c.below = c.here;
            c.here = c.above;
            if (r + 1 < stored_rows) c.above = conserved_prim(c.next, R(1), R(1), gamma);
            else c.above = lab_prim(g, i, r + 1);
            // The low face state goes into the flux, then the high one straight into c.top.
            const Prim h = half_slopes(c.below, c.here, c.above);
            for (int v = 0; v < NVAR; ++v) c.y_lo[v] = c.y_hi[v];
            if (r >= j0) lab_flux(c.top, face_state(c.here, h, -1), 1, gas, dt_dy, c.y_hi);
            c.top = face_state(c.here, h, 1);
#else
            c.below = load_prim(g, stored_rows, i, r - 1);
#endif
            store_prim(row_prim, threadIdx.x + 1, c.below);
#if DIM == 2
            // Row r + 2 for the next step, loaded here and not before the flux: there ptxas
            // overwrote an address register of these loads right after them, and warps waited
            // until the loads had read it (Nsight Compute: 31% of the stall samples; the
            // kernel was 7% slower).
            if (r + 2 < stored_rows) load_cell(u, ncell, (r + 2) * nx + i, c.next);
#endif
            if (r > j0 && i >= 0 && i < nx) {
                load_cell(u, ncell, (r - 1) * nx + i, c.old);
                if (blend) load_cell(u0, ncell, (r - 1) * nx + i, c.start);
            }
        }
        if (r <= j0) continue;
        __syncthreads();

        // Row r - 1 reconstructed in x.
        PHASE {
            Column& c = MY(col);
            const int t = threadIdx.x;
            const Prim left = shared_prim(row_prim, t);
            const Prim right = shared_prim(row_prim, t + 2);
            const Prim h = half_slopes(left, c.below, right);
            c.x_lo = face_state(c.below, h, -1);
            store_prim(row_hi, t + 1, face_state(c.below, h, 1));
        }
        __syncthreads();

        // The flux through each column's low x face.
        PHASE {
            const int t = threadIdx.x;
            real f[NVAR];
            lab_flux(shared_prim(row_hi, t), MY(col).x_lo, 0, gas, dt_dx, f);
            store_flux(row_flux, t, f);
        }
        __syncthreads();

        // Update row r - 1 in the strip's own columns.
        PHASE {
            Column& c = MY(col);
            const int t = threadIdx.x, i = i0 + t;
            if (t >= 2 && t < MARCH_W - 2 && i < nx) {
                const int k = (r - 1) * nx + i;
                // The x fluxes through the cell's low and high faces.
                real f_lo[2 * FLUX_PAIRS], f_hi[2 * FLUX_PAIRS];
                for (int q = 0; q < FLUX_PAIRS; ++q) {
                    const Pair lo = row_flux[q][t], hi = row_flux[q][t + 1];
                    f_lo[2 * q] = lo.a;
                    f_lo[2 * q + 1] = lo.b;
                    f_hi[2 * q] = hi.a;
                    f_hi[2 * q + 1] = hi.b;
                }
                real next[NVAR];
                real* o = out + k;
                for (int v = 0; v < NVAR; ++v, o += ncell) {
                    real change = f_lo[v] - f_hi[v];
#if DIM == 2
                    change = change + (c.y_lo[v] - c.y_hi[v]);
#endif
                    const real stage = c.old[v] + change;
                    if (!blend) {
                        next[v] = stage;
                    } else {
                        const real start = c.start[v];
                        next[v] = start + w * (stage - start);
                    }
                    *o = next[v];
                }
#if DIM == 2
                const real my = next[2];
#else
                const real my = R(0);
#endif
                if (write_rates)
                    c.rate = fmax(c.rate, cell_rate(next[0], next[1], my, next[VAR_E], gamma,
                                                    inv_dx, inv_dy));
            }
        }
    }

    if (write_rates) {
        PHASE { block_rates[threadIdx.x] = MY(col).rate; }
        block_max(block_rates);
        PHASE {
            if (threadIdx.x == 0) rates[blockIdx.y * gridDim.x + blockIdx.x] = block_rates[0];
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
