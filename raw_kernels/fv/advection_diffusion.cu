// Advection and diffusion of a scalar, c_t + div(a c) = D lap c, finite volumes on a structured
// 1D or 2D grid (driver: solvers/fv/advection_diffusion.py): one fused kernel per Runge-Kutta
// stage (face fluxes and update), and the per-block stability rates of the fixed velocity field.
//
// State: c of cell (i, j) at j * nx + i, x fastest. Face velocities (normal components, fixed):
// ax of the x face i - 1/2 of row j at j * (nx + 1) + i (i = 0 .. nx), ay of the y face j - 1/2
// of column i at j * nx + i (j = 0 .. ny; 1D: unused).
//
// Compile-time scheme:
//   DIM             1 or 2
//   RECONSTRUCTION  1 first order (upwind), 2 MUSCL on c
//   LIMITER         1 minmod, 2 van Leer, 3 monotonized central (MC)
// Launch constants (from the driver):
//   TILE_X, TILE_Y  the cells (and threads) of a stage block; TILE_Y is 1 in 1D
//   RATE_THREADS    threads of a rate block, a power of two
//
// Boundaries are applied while a block loads its tile (no ghost cells in memory): an index
// outside the grid wraps around on a periodic axis and is clamped to the edge cell otherwise
// (zero gradient: no diffusive flux through the side; a wall also has zero face velocity there).
#include "prelude.h"
#include "reduce.h"
#include "limiter.h"

#ifndef DIM
#error "DIM (1 or 2) must be defined"
#endif
#ifndef RECONSTRUCTION
#error "RECONSTRUCTION (1 first order, 2 MUSCL) must be defined"
#endif
#ifndef LIMITER
#error "LIMITER (1 minmod, 2 van Leer, 3 MC) must be defined"
#endif
#ifndef TILE_X
#error "TILE_X (cells of a stage block along x) must be defined"
#endif
#ifndef TILE_Y
#error "TILE_Y (cells of a stage block along y) must be defined"
#endif
#ifndef RATE_THREADS
#error "RATE_THREADS (threads of a rate block) must be defined"
#endif
#if DIM == 1 && TILE_Y != 1
#error "a 1D stage block is one row (TILE_Y 1)"
#endif

// Halo cells a tile loads on each side of an axis: a face's MUSCL states need two cells each
// side of it. On GPU a face loop is never unrolled: each face flux then comes from one copy of
// its code, so the two blocks that share a face compute the same bits (no copy of a * b + c is
// contracted to an FMA differently) and the totals stay conserved to rounding.
#define HALO 2
#define TILE_W (TILE_X + 2 * HALO)
#if DIM == 2
#define HALO_Y HALO
#else
#define HALO_Y 0
#endif
#define TILE_H (TILE_Y + 2 * HALO_Y)
#define STAGE_THREADS (TILE_X * TILE_Y)
#ifdef __CUDA_ARCH__
#define NO_UNROLL _Pragma("unroll 1")
#else
#define NO_UNROLL
#endif

// The stored index of cell i along an axis of n cells: wrapped on a periodic axis, else clamped
// to the edge cell. Cells beyond the halo (past the grid's end in a partial tile) map anywhere
// in range; their values are not used.
DEVICE int cell_index(int i, int n, int periodic)
{
    if (i >= 0 && i < n) return i;
    if (periodic) {
        i %= n;
        return i < 0 ? i + n : i;
    }
    return i < 0 ? 0 : n - 1;
}

// The flux through the face between cells m1 and p0 (m2, p1 their other neighbours on the
// axis), times dt/dx: upwind of the reconstructed face states with a_dt = a dt/dx, minus the
// central diffusive flux with d_dt = D dt/dx^2.
DEVICE real face_flux(real m2, real m1, real p0, real p1, real a_dt, real d_dt)
{
    const real left = m1 + half_slope(m1 - m2, p0 - m1);
    const real right = p0 - half_slope(p0 - m1, p1 - p0);
    const real upwind = a_dt >= R(0) ? left : right;
    return fma(a_dt, upwind, -(d_dt * (p0 - m1)));
}

// The buffers of a Runge-Kutta stage, by role, as in euler_scheme.h: the state alternates
// between state_a and state_b; finish_dt flipped `parity` when the step began, so U^n is in the
// buffer parity does not name and U^(n+1) goes to the one it names; scratch holds an
// intermediate stage. No stage writes a buffer it reads.
#define ROLE_OLD 0      // U^n
#define ROLE_NEW 1      // U^(n+1), and the first stage of SSP-RK3
#define ROLE_SCRATCH 2  // the other intermediate stage
DEVICE real* role_buffer(int role, int parity, real* state_a, real* state_b, real* scratch)
{
    if (role == ROLE_SCRATCH) return scratch;
    return (role == ROLE_NEW) == (parity != 0) ? state_b : state_a;
}

// One Runge-Kutta stage, fluxes and update fused: out = u0 + w (u + dt L(u) - u0), with u and
// out the buffers of roles u_role and out_role and u0 = U^n (w == 1, a first stage, does not
// read u0). Written as u0 + w (stage - u0) so that the weights sum to exactly 1 in `real`.
// A block of TILE_X x TILE_Y threads updates as many cells: it loads its tile of u with a halo
// of two cells along each axis, computes the flux through every face of the tile once (each
// thread a strided share of the faces) and updates each cell from its four face fluxes.
// dt == 0 means the run has reached its stop time: the stage writes nothing.
// The rate is reduced once, at setup (the velocity is fixed), so a non-finite value is caught
// here instead: the scheme is linear and stable under the CFL and the initial state is finite,
// but values near the largest real can overflow (differences of +-3e38 in fp32). A cell whose
// new value is not finite sets rates[0] to infinity (every such thread stores the same value),
// and the next step's finish_dt sets the clock's divergence status.
BLOCK_KERNEL void advection_diffusion_stage(
    real* state_a, real* state_b, real* scratch, const int* __restrict__ parity, int u_role,
    int out_role, const real* __restrict__ dt_dev, const real* __restrict__ ax,
    const real* __restrict__ ay, int nx, int ny, int periodic_x, int periodic_y, real inv_dx,
    real inv_dy, real diffusion_x, real diffusion_y, real w, real* __restrict__ rates)
{
    __shared__ real tile[TILE_H][TILE_W];
    __shared__ real flux_x[TILE_Y][TILE_X + 1];
#if DIM == 2
    __shared__ real flux_y[TILE_Y + 1][TILE_X];
#endif

    // Block-uniform values (the same in every thread, so they may live across barriers).
    const real dt = dt_dev[0];
    if (dt == R(0)) return;
    const int step_parity = parity[0];
    const real* __restrict__ u = role_buffer(u_role, step_parity, state_a, state_b, scratch);
    const real* u0 = role_buffer(ROLE_OLD, step_parity, state_a, state_b, scratch);
    real* out = role_buffer(out_role, step_parity, state_a, state_b, scratch);
    const bool blend = w != R(1);  // the stage reads u0
    const int i0 = (int)blockIdx.x * TILE_X, j0 = (int)blockIdx.y * TILE_Y;
    const real dt_dx = dt * inv_dx, d_dt_x = dt * diffusion_x;
#if DIM == 2
    const real dt_dy = dt * inv_dy, d_dt_y = dt * diffusion_y;
#else
    (void)ay;
    (void)periodic_y;
    (void)inv_dy;
    (void)diffusion_y;
#endif

    // The tile and its halo: the cells along x of the tile's rows and along y of its columns
    // (the corners are not used).
    PHASE {
        const int t = (int)(threadIdx.y * TILE_X + threadIdx.x);
        NO_UNROLL
        for (int k = t; k < TILE_H * TILE_W; k += STAGE_THREADS) {
            const int ty = k / TILE_W, tx = k % TILE_W;
            const bool row = ty >= HALO_Y && ty < TILE_Y + HALO_Y;
            const bool column = tx >= HALO && tx < TILE_X + HALO;
            real c = R(0);
            if (row || column) {
                const int i = cell_index(i0 + tx - HALO, nx, periodic_x);
#if DIM == 2
                const int j = cell_index(j0 + ty - HALO_Y, ny, periodic_y);
#else
                const int j = 0;
#endif
                c = u[j * nx + i];
            }
            tile[ty][tx] = c;
        }
    }
    __syncthreads();

    // The flux through every face of the tile, times dt/dx: x face tx lies between the tile's
    // cells tx - 1 and tx of a row, y face ty between cells ty - 1 and ty of a column.
    PHASE {
        const int t = (int)(threadIdx.y * TILE_X + threadIdx.x);
        NO_UNROLL
        for (int f = t; f < TILE_Y * (TILE_X + 1); f += STAGE_THREADS) {
            const int ty = f / (TILE_X + 1), tx = f % (TILE_X + 1);
            const int i = i0 + tx, j = j0 + ty;
            real flux = R(0);
            if (i <= nx && j < ny) {
                const real* c = &tile[ty + HALO_Y][tx + HALO];  // c[0]: cell i, c[-1]: i - 1
                flux = face_flux(c[-2], c[-1], c[0], c[1], ax[j * (nx + 1) + i] * dt_dx,
                                 d_dt_x);
            }
            flux_x[ty][tx] = flux;
        }
#if DIM == 2
        NO_UNROLL
        for (int f = t; f < (TILE_Y + 1) * TILE_X; f += STAGE_THREADS) {
            const int ty = f / TILE_X, tx = f % TILE_X;
            const int i = i0 + tx, j = j0 + ty;
            real flux = R(0);
            if (i < nx && j <= ny) {
                const int r = ty + HALO_Y, q = tx + HALO;  // tile[r][q]: cell j of column q
                flux = face_flux(tile[r - 2][q], tile[r - 1][q], tile[r][q], tile[r + 1][q],
                                 ay[j * nx + i] * dt_dy, d_dt_y);
            }
            flux_y[ty][tx] = flux;
        }
#endif
    }
    __syncthreads();

    // Each thread updates its cell.
    PHASE {
        const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
        const int i = i0 + tx, j = j0 + ty;
        if (i < nx && j < ny) {
            const int k = j * nx + i;
            real change = flux_x[ty][tx] - flux_x[ty][tx + 1];
#if DIM == 2
            change = change + (flux_y[ty][tx] - flux_y[ty + 1][tx]);
#endif
            const real stage = tile[ty + HALO_Y][tx + HALO] + change;
            real value = stage;
            if (blend) {
                const real start = u0[k];
                value = start + w * (stage - start);
            }
            out[k] = value;
            if (!(fabs(value) < REAL_INF)) rates[0] = REAL_INF;
        }
    }
}

// Per block, the largest stability rate over its cells (grid-stride): the outflow speeds
// through each cell's faces over the spacing, plus diffusion_rate = 2 D (1/dx^2 + 1/dy^2).
// dt = cfl / rate keeps a forward Euler step of the upwind scheme a convex combination of the
// old values (monotone) for cfl <= 1. The velocity is fixed, so this runs once, at setup.
BLOCK_KERNEL void advection_diffusion_rates(const real* __restrict__ ax,
                                            const real* __restrict__ ay,
                                            real* __restrict__ rates, int nx, int ny,
                                            real inv_dx, real inv_dy, real diffusion_rate)
{
    __shared__ real s[RATE_THREADS];
#if DIM == 1
    (void)ay;
    (void)inv_dy;
#endif
    PHASE {
        const int ncell = nx * ny;
        real m = R(0);
        for (int c = (int)(blockIdx.x * blockDim.x + threadIdx.x); c < ncell;
             c += (int)(blockDim.x * gridDim.x)) {
            const int i = c % nx, j = c / nx;
            const real* a = ax + j * (nx + 1) + i;
            real rate = (fmax(a[1], R(0)) - fmin(a[0], R(0))) * inv_dx;
#if DIM == 2
            const real lo = ay[j * nx + i], hi = ay[(j + 1) * nx + i];
            rate = rate + (fmax(hi, R(0)) - fmin(lo, R(0))) * inv_dy;
#endif
            m = fmax(m, rate + diffusion_rate);
        }
        s[threadIdx.x] = m;
    }
    block_max(s);
    PHASE {
        if (threadIdx.x == 0) rates[blockIdx.x] = s[0];
    }
}
