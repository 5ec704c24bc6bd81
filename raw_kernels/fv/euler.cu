// Compressible Euler equations, finite volumes (the scheme: euler_scheme.h): the march, the
// stage kernel for all but small 2D grids, and the per-block stability rates of a state.
#include "euler_scheme.h"

// A stage block marches up a strip of the grid MARCH_W columns wide, one thread per column:
// the strip updates the MARCH_W - 4 columns between two halo columns on each side (a halo
// column's thread loads and reconstructs, so that its neighbours have their faces, but writes
// nothing), and `rows` rows (a launch argument). The shared-memory arrays hold one row each.
// In 3D a strip lies in one z plane (blockIdx.z): each updated cell also loads the two cells
// below and two above it in z and computes the fluxes through its low and high z faces (each
// z face is computed by the blocks of both its planes, from the same states in the same
// operations: the same bits).
//
// Compile-time (besides the scheme's, see euler_scheme.h), from solvers/fv/euler.py:
//   MARCH_W       threads of a stage block, the strip's width (MARCH_WIDTH there)
//   RATE_THREADS  threads of a euler_max_rate block, a power of two (RATE_BLOCK of clock.py)
#ifndef MARCH_W
#error "MARCH_W (threads of a stage block, the width of its strip) must be defined"
#endif
#ifndef RATE_THREADS
#error "RATE_THREADS (threads of a rate block) must be defined"
#endif
#define MARCH_CELLS (MARCH_W - 4)

// Primitive state of cell (i, j) of z plane k (first cell `plane`) in the lab frame: rows
// 0 .. stored_rows - 1 straight from u (stored_rows is 0 where the strip reaches past the grid
// in x), any other cell through lab_prim's boundary mapping.
DEVICE Prim load_prim(const Grid& g, int stored_rows, int plane, int i, int j, int k)
{
    if (j >= 0 && j < stored_rows)
        return cell_prim(g.u, grid_cells(g), plane + j * g.nx + i, R(1), R(1), g.gamma);
    return lab_prim(g, i, j, k);
}

#if DIM == 3
// Primitive state of cell (i, j, k) with i and j inside the grid: straight from u where k is
// inside too, else through lab_prim's boundary mapping.
DEVICE Prim z_neighbour(const Grid& g, int i, int j, int k)
{
    if (k >= 0 && k < g.nz)
        return cell_prim(g.u, grid_cells(g), (k * g.ny + j) * g.nx + i, R(1), R(1), g.gamma);
    return lab_prim(g, i, j, k);
}

// The fluxes (times dt/dz) through the low and high z faces of cell (i, j, k), whose state is
// `here`, reconstructed from the two cells below and the two above it.
DEVICE void z_fluxes(const Grid& g, int i, int j, int k, const Prim& here, const Gas& gas,
                     real dt_dz, real lo[NVAR], real hi[NVAR])
{
    const Prim below2 = z_neighbour(g, i, j, k - 2), below = z_neighbour(g, i, j, k - 1);
    const Prim above = z_neighbour(g, i, j, k + 1), above2 = z_neighbour(g, i, j, k + 2);
    const Prim h = half_slopes(below, here, above);
    lab_flux(face_state(below, half_slopes(below2, below, here), 1), face_state(here, h, -1), 2,
             gas, dt_dz, lo);
    lab_flux(face_state(here, h, 1), face_state(above, half_slopes(here, above, above2), -1), 2,
             gas, dt_dz, hi);
}
#endif

// Two values that move between a thread and shared memory in one access.
struct alignas(2 * sizeof(real)) Pair {
    real a, b;
};
#define FLUX_PAIRS ((NVAR + 1) / 2)

// A primitive state in shared memory: pairs (rho, un), (ut, p), and in 3D (ut2, unused).
#define PRIM_PAIRS (DIM == 3 ? 3 : 2)

DEVICE void store_prim(Pair (*row)[MARCH_W + 2], int t, const Prim& w)
{
    row[0][t] = Pair{w.rho, w.un};
    row[1][t] = Pair{w.ut, w.p};
#if DIM == 3
    row[2][t] = Pair{w.ut2, R(0)};
#endif
}

DEVICE Prim shared_prim(const Pair (*row)[MARCH_W + 2], int t)
{
    const Pair first = row[0][t], second = row[1][t];
    Prim w;
    w.rho = first.a;
    w.un = first.b;
    w.ut = second.a;
    w.p = second.b;
#if DIM == 3
    w.ut2 = row[2][t].a;
#endif
    return w;
}

// A face flux in shared memory, variable v in pair v / 2 (1D pads the last pair).
DEVICE void store_flux(Pair (*row)[MARCH_W], int t, const real f[NVAR])
{
    for (int k = 0; k < FLUX_PAIRS; ++k)
        row[k][t] = Pair{f[2 * k], 2 * k + 1 < NVAR ? f[2 * k + 1] : R(0)};
}

// What a stage thread carries up its column from row to row (registers on the GPU).
struct Column {
#if DIM >= 2
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
//     updates row r - 1 (in 3D with its z fluxes, see z_fluxes), writing each conserved
//     variable of out once.
// So every cell of the strip's rows (and two rows each side) is loaded and reconstructed once
// and every face flux computed once (both cells of a face use the same bits: conservation to
// rounding, and x <-> y symmetric problems stay symmetric to the bit). Instruction issue and
// load latency, not DRAM bandwidth, limit this kernel, so its loads start early: the states of
// row r + 2 are loaded into registers in step r (in strips inside the grid in x), and the u
// and u0 of row r - 1 that the update needs in step r before the block turns to the x
// direction (u again: a line fetched three steps before). With write_rates it also leaves per
// block the largest stability rate of the new state in rates, for the next dt. dt == 0 means
// the run has reached its stop time: the stage writes nothing. `halos`: the halo buffers of a
// decomposed grid's block (HALOS builds; see halo_sides), else unused. Registers are capped
// so that 8 blocks (32 warps) share a multiprocessor in 2D fp32, 4 in fp64 and in 3D: more
// warps hide more load latency but leave each thread fewer registers before it spills (the
// caps compared: docs/euler_performance.md).
#define STAGE_BLOCKS_PER_SM (REAL_BITS == 32 && DIM < 3 ? 8 : 4)
BLOCK_KERNEL LAUNCH_BOUNDS(MARCH_W, STAGE_BLOCKS_PER_SM)
void euler_stage(real* state_a, real* state_b, real* scratch, const int* __restrict__ parity,
                 int u_role, int out_role, const real* __restrict__ dt_dev,
                 const real* __restrict__ inflow, const real* __restrict__ halos,
                 real* __restrict__ rates, int nx, int ny, int nz, int rows, int bc_xlo,
                 int bc_xhi, int bc_ylo, int bc_yhi, int bc_zlo, int bc_zhi, real inv_dx,
                 real inv_dy, real inv_dz, real gamma, real inv_gm1, real w, int write_rates,
                 int block_x0, int block_y0, int block_z0, int blocks_x, int blocks_y)
{
    // Thread t's entry of row_prim and row_hi is t + 1: thread t reads its neighbours' at t and
    // t + 2, and the edge threads (whose x states are not used) read a pad, not a clamped
    // index, so the march loop has no selects for the edges.
    __shared__ Pair row_prim[PRIM_PAIRS][MARCH_W + 2], row_hi[PRIM_PAIRS][MARCH_W + 2];
    __shared__ Pair row_flux[FLUX_PAIRS][MARCH_W];
    __shared__ real block_rates[MARCH_W];
    THREAD_STATE(Column, col);

    // The pads hold a harmless state, so that no thread reads uninitialized memory.
    PHASE {
        if (threadIdx.x < 2) {
            const int pad = threadIdx.x == 0 ? 0 : MARCH_W + 1;
            store_prim(row_prim, pad, rest_prim());
            store_prim(row_hi, pad, rest_prim());
        }
    }
    __syncthreads();

    // Block-uniform values (the same in every thread, so they may live across barriers).
    const real dt = dt_dev[0];
    if (dt == R(0)) return;
    const StageBuffers buffers = stage_buffers(u_role, out_role, parity, state_a, state_b,
                                               scratch);
    const real* __restrict__ u = buffers.u;
    const real* u0 = buffers.u0;
    real* out = buffers.out;
    const real dt_dx = dt * inv_dx, dt_dy = dt * inv_dy;
    const bool blend = w != R(1);  // the stage reads u0
    // This launch's blocks from (block_x0, block_y0, block_z0) of the stage's whole launch of
    // blocks_x x blocks_y x nz blocks: a decomposed grid's block updates its cells away from
    // its halos while the halos travel, the rest after (solvers/fv/euler_halo.py).
    const int i0 = ((int)blockIdx.x + block_x0) * MARCH_CELLS - 2;  // the column of thread 0
    const int j0 = ((int)blockIdx.y + block_y0) * rows;  // rows j0 .. j1 - 1 are updated
    const int j1 = j0 + rows < ny ? j0 + rows : ny;
    const bool inside_x = i0 >= 0 && i0 + MARCH_W <= nx;
    // Rows below stored_rows are read straight from u; any other through lab_prim (one
    // compare a row instead of two).
    const int stored_rows = inside_x ? ny : 0;
#if DIM == 3
    const int k = (int)blockIdx.z + block_z0, plane = k * nx * ny;  // the strip's z plane
    const int ncell = nx * ny * nz;
    const real dt_dz = dt * inv_dz;
    const Grid g = with_halos(
        Grid{u, inflow, nx, ny, bc_xlo, bc_xhi, bc_ylo, bc_yhi, gamma, nz, bc_zlo,
             bc_zhi UNSET_HALOS}, halos);
#else
    const int k = 0, plane = 0, ncell = nx * ny;
    (void)nz;
    (void)block_z0;
    (void)bc_zlo;
    (void)bc_zhi;
    (void)inv_dz;
    const Grid g = with_halos(Grid{u, inflow, nx, ny, bc_xlo, bc_xhi, bc_ylo, bc_yhi,
                                   gamma UNSET_HALOS},
                              halos);
#endif
    const Gas gas = {gamma, inv_gm1};

    // The two rows below the strip start the march (1D: the one row is loaded in its step).
#if DIM >= 2
    PHASE {
        const int i = i0 + (int)threadIdx.x;
        MY(col).here = load_prim(g, stored_rows, plane, i, j0 - 2, k);
        MY(col).above = load_prim(g, stored_rows, plane, i, j0 - 1, k);
        if (inside_x) load_cell(u, ncell, plane + j0 * nx + i, MY(col).next);
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
#if DIM >= 2
            column_moves_up(c, g, i, r, k, stored_rows);
            // The low face state goes into the flux, then the high one straight into c.top.
            const Prim h = half_slopes(c.below, c.here, c.above);
            for (int v = 0; v < NVAR; ++v) c.y_lo[v] = c.y_hi[v];
            if (r >= j0) lab_flux(c.top, face_state(c.here, h, -1), 1, gas, dt_dy, c.y_hi);
            c.top = face_state(c.here, h, 1);
#else
            c.below = load_prim(g, stored_rows, plane, i, r - 1, k);
#endif
            store_prim(row_prim, threadIdx.x + 1, c.below);
#if DIM >= 2
            // Row r + 2 for the next step, loaded here and not before the flux: there ptxas
            // overwrote an address register of these loads right after them, and warps waited
            // until the loads had read it (docs/euler_performance.md).
            if (r + 2 < stored_rows) load_cell(u, ncell, plane + (r + 2) * nx + i, c.next);
#endif
            if (r > j0 && i >= 0 && i < nx) {
                load_cell(u, ncell, plane + (r - 1) * nx + i, c.old);
                if (blend) load_cell(u0, ncell, plane + (r - 1) * nx + i, c.start);
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
                const int cell = plane + (r - 1) * nx + i;
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
#if DIM == 3
                real z_lo[NVAR], z_hi[NVAR];
                z_fluxes(g, i, r - 1, k, c.below, gas, dt_dz, z_lo, z_hi);
                update_cell(out + cell, ncell, c.old, c.start, f_lo, f_hi, c.y_lo, c.y_hi, z_lo,
                            z_hi, blend, w, next);
#elif DIM == 2
                update_cell(out + cell, ncell, c.old, c.start, f_lo, f_hi, c.y_lo, c.y_hi, blend,
                            w, next);
#else
                update_cell(out + cell, ncell, c.old, c.start, f_lo, f_hi, nullptr, nullptr,
                            blend, w, next);
#endif
                if (write_rates)
                    c.rate = fmax(c.rate, state_rate(next, gamma, inv_dx, inv_dy, inv_dz));
            }
        }
    }

    if (write_rates) {
        PHASE { block_rates[threadIdx.x] = MY(col).rate; }
        block_max(block_rates);
        PHASE {
            if (threadIdx.x == 0)
                rates[(((int)blockIdx.z + block_z0) * blocks_y + (int)blockIdx.y + block_y0) *
                      blocks_x + (int)blockIdx.x + block_x0] = block_rates[0];
        }
    }
}

// Per block, the largest stability rate over its cells (grid-stride); a state set from the
// host gets its first dt from this, later steps from the last stage's write_rates.
BLOCK_KERNEL void euler_max_rate(const real* __restrict__ u, real* __restrict__ rates, int nx,
                                 int ny, int nz, real inv_dx, real inv_dy, real inv_dz,
                                 real gamma)
{
    __shared__ real s[RATE_THREADS];
    PHASE {
        const int ncell = nx * ny * nz;
        real m = R(0);
        for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < ncell;
             c += blockDim.x * gridDim.x) {
#if DIM >= 2
            const real my = u[2 * ncell + c];
#else
            const real my = R(0);
#endif
#if DIM == 3
            const real mz = u[3 * ncell + c];
#else
            const real mz = R(0);
#endif
            m = fmax(m, cell_rate(u[c], u[ncell + c], my, u[VAR_E * ncell + c], gamma, inv_dx,
                                  inv_dy, mz, inv_dz));
        }
        s[threadIdx.x] = m;
    }
    block_max(s);
    PHASE {
        if (threadIdx.x == 0) rates[blockIdx.x] = s[0];
    }
}
