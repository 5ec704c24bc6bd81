// Compressible Euler equations, finite volumes: a MUSCL-Hancock step (euler_hancock.h) in one
// launch. A block marches up a strip of the grid like euler.cu's stage kernel (MARCH_W threads,
// one a column, the MARCH_W - 4 columns between two halo columns on each side updated, `rows`
// rows), and the last block to finish advances the clock (close_step, clock.h): the step needs
// no other launch. In 3D a strip lies in one z plane (blockIdx.z), and each updated cell also
// predicts the face states of its two z neighbours, from their own neighbours, for the fluxes
// through its z faces (each z face is computed by the blocks of both its planes, from the same
// states in the same operations: the same bits).
//
// Compile-time (besides the scheme's, see euler_scheme.h), from solvers/fv/euler.py:
//   MARCH_W  threads of a block, the strip's width (MARCH_WIDTH there)
#include "euler_hancock.h"
#include "clock.h"

#ifndef MARCH_W
#error "MARCH_W (threads of a step block, the width of its strip) must be defined"
#endif
#define MARCH_CELLS (MARCH_W - 4)
// Blocks sharing a multiprocessor, as euler.cu's STAGE_BLOCKS_PER_SM: 3D needs the registers.
#define HANCOCK_BLOCKS_PER_SM (REAL_BITS == 32 && DIM < 3 ? 8 : 4)

// A primitive state (a cell's or a face's) in shared memory, aligned for wide accesses.
struct alignas(4 * sizeof(real)) RowPrim {
    Prim w;
};

// A face flux (times dt/dx) in shared memory.
struct alignas(4 * sizeof(real)) RowFlux {
    real f[NVAR];
};

// What a thread carries up its column from row to row (registers on the GPU). In step r of the
// march (below) the column's row r is `here`.
struct HancockColumn {
#if DIM >= 2
    Prim below, above;     // rows r - 1 and r + 1
    real next[NVAR];       // u of row r + 2, loaded a step early (strips inside in x)
    Prim top;              // row r - 1's predicted state at its high y face
    real y_lo[NVAR];       // y flux (times dt/dy) through row r - 1's low face
#endif
#if DIM == 3
    Prim back, front;            // row r's z neighbours, planes k - 1 and k + 1
    real z_lo[NVAR], z_hi[NVAR];  // z fluxes (times dt/dz) through row r - 1's faces
#endif
    Prim here;             // row r
    Prim x_lo;             // row r's predicted state at its low x face
    real old[NVAR];        // u of row r - 1, for its update
    real rate;             // largest stability rate of the cells updated so far
};

#if DIM == 3
// The predicted face states of cell (i, j, k), whose state is `here` and whose z neighbours are
// back (plane k - 1) and front (k + 1), its x and y neighbours read through lab_prim: the same
// inputs and operations as in the blocks of its own plane (the same bits).
DEVICE Faces plane_neighbour_faces(const Grid& g, int i, int j, int k, const Prim& here,
                                   const Prim& back, const Prim& front, const Gas& gas,
                                   const real half_dt_dx[DIM])
{
    const Prim below[DIM] = {lab_prim(g, i - 1, j, k), lab_prim(g, i, j - 1, k), back};
    const Prim above[DIM] = {lab_prim(g, i + 1, j, k), lab_prim(g, i, j + 1, k), front};
    return hancock_faces(here, below, above, gas, half_dt_dx);
}
#endif

// One MUSCL-Hancock step: out = u + dt L(u), with u the buffer parity names (U^n) and out the
// other, dt from the clock (step_begins: no step once t has reached the stop time, and then
// nothing is written). In step r of its march a block
//   - loads row r + 1 (2D, 3D; and row r's z neighbours in 3D), publishes row r's primitive
//     states and loads u of row r - 1;
//   - predicts row r's face states (hancock_faces: x neighbours from shared memory, y and z
//     ones from the thread's registers), computes the y flux through the face between rows
//     r - 1 and r in registers, updates row r - 1, whose x fluxes were computed in step r - 1,
//     and in 3D computes row r's z fluxes;
//   - computes row r's x fluxes through shared memory.
// Every cell of the strip's rows (and two rows each side) is loaded, reconstructed and
// predicted once (3D: and its z neighbours again), and every face flux computed from the same
// two states wherever it is needed (conservation to rounding). Each block then leaves the
// largest stability rate of the cells it wrote, and the last one ends the step with the next
// dt (close_step). The z arguments are unused in 1D and 2D.
BLOCK_KERNEL LAUNCH_BOUNDS(MARCH_W, HANCOCK_BLOCKS_PER_SM)
void euler_hancock(real* state_a, real* state_b, int* parity, double* ctrl, real* rates,
                   int* tickets, const real* __restrict__ inflow, int nx, int ny, int nz,
                   int rows, int bc_xlo, int bc_xhi, int bc_ylo, int bc_yhi, int bc_zlo,
                   int bc_zhi, real inv_dx, real inv_dy, real inv_dz, real gamma, real inv_gm1,
                   real cfl)
{
    // Thread t's entry of row_prim and row_hi is t + 1; the edge threads (whose predicted states
    // are not used) read a pad at 0 or MARCH_W + 1.
    __shared__ RowPrim row_prim[MARCH_W + 2], row_hi[MARCH_W + 2];
    __shared__ RowFlux row_flux[MARCH_W];
    __shared__ real block_rates[MARCH_W];
    __shared__ real step_dt[1];
    __shared__ int taken[1], last[1];
    THREAD_STATE(HancockColumn, col);

    // The pads hold a harmless state; this step's dt, the same in every block.
    PHASE {
        if (threadIdx.x < 2) {
            const int pad = threadIdx.x == 0 ? 0 : MARCH_W + 1;
            row_prim[pad].w = rest_prim();
            row_hi[pad].w = rest_prim();
        }
        if (threadIdx.x == 0)
            taken[0] = step_begins(ctrl, blockIdx.x + blockIdx.y + blockIdx.z == 0, step_dt);
    }
    __syncthreads();
    if (!taken[0]) return;

    // Block-uniform values (the same in every thread, so they may live across barriers).
    const real dt = step_dt[0];
    const real* __restrict__ u = step_input(state_a, state_b, parity);
    real* out = step_output(state_a, state_b, parity);
    const real dt_dx = dt * inv_dx, dt_dy = dt * inv_dy, dt_dz = dt * inv_dz;
#if DIM == 3
    const real half_dt_dx[DIM] = {R(0.5) * dt_dx, R(0.5) * dt_dy, R(0.5) * dt_dz};
    const int k = blockIdx.z, plane = k * nx * ny;  // the strip's z plane, its first cell
    const int ncell = nx * ny * nz;
    const Grid g = {u, inflow, nx, ny, bc_xlo, bc_xhi, bc_ylo, bc_yhi, gamma, nz, bc_zlo, bc_zhi};
#else
#if DIM == 2
    const real half_dt_dx[DIM] = {R(0.5) * dt_dx, R(0.5) * dt_dy};
#else
    const real half_dt_dx[DIM] = {R(0.5) * dt_dx};
    (void)dt_dy;
#endif
    (void)nz;
    (void)bc_zlo;
    (void)bc_zhi;
    (void)dt_dz;
    const int k = 0, plane = 0, ncell = nx * ny;
    const Grid g = {u, inflow, nx, ny, bc_xlo, bc_xhi, bc_ylo, bc_yhi, gamma};
#endif
    const int i0 = (int)blockIdx.x * MARCH_CELLS - 2;  // the column of thread 0
    const int j0 = (int)blockIdx.y * rows;                // rows j0 .. j1 - 1 are updated
    const int j1 = j0 + rows < ny ? j0 + rows : ny;
    const Gas gas = {gamma, inv_gm1};

    // The two rows below the strip start the march (1D: the one row is loaded in its step).
    // Rows below stored_rows are read straight from u (in strips inside the grid in x); any
    // other through lab_prim.
#if DIM >= 2
    const int stored_rows = i0 >= 0 && i0 + MARCH_W <= nx ? ny : 0;
    PHASE {
        HancockColumn& c = MY(col);
        const int i = i0 + (int)threadIdx.x;
        c.here = lab_prim(g, i, j0 - 2, k);
        c.above = lab_prim(g, i, j0 - 1, k);
        if (stored_rows > 0) load_cell(u, ncell, plane + j0 * nx + i, c.next);
        c.rate = R(0);
    }
    const int first = j0 - 1;
#else
    PHASE { MY(col).rate = R(0); }
    const int first = j0;
#endif
    for (int r = first; r <= j1; ++r) {
        // Row r in (2D, 3D: row r + 1 loaded, row r + 2 for the next step), published for the
        // x direction; u of row r - 1 for its update.
        PHASE {
            HancockColumn& c = MY(col);
            const int i = i0 + (int)threadIdx.x;
#if DIM >= 2
            column_moves_up(c, g, i, r, k, stored_rows);
            if (r + 2 < stored_rows) load_cell(u, ncell, plane + (r + 2) * nx + i, c.next);
#else
            if (r < j1) c.here = lab_prim(g, i, r, k);
#endif
#if DIM == 3
            c.back = lab_prim(g, i, r, k - 1);
            c.front = lab_prim(g, i, r, k + 1);
#endif
            row_prim[threadIdx.x + 1].w = c.here;
            if (r > j0 && i >= 0 && i < nx) load_cell(u, ncell, plane + (r - 1) * nx + i, c.old);
        }
        __syncthreads();

        // Row r's predicted face states (1D: none past the last row); the flux through its low
        // y face; the update of row r - 1 in the strip's own columns; row r's z fluxes.
        PHASE {
            HancockColumn& c = MY(col);
            const int t = threadIdx.x, i = i0 + t;
            const bool own_column = t >= 2 && t < MARCH_W - 2 && i < nx;
#if DIM >= 2
            real y_hi[NVAR] = {};  // the y flux through row r - 1's high face
#endif
#if DIM == 3
            real z_lo[NVAR] = {}, z_hi[NVAR] = {};  // row r's z fluxes
#endif
            if (DIM >= 2 || r < j1) {
                Prim below[DIM], above[DIM];
                below[0] = row_prim[t].w;
                above[0] = row_prim[t + 2].w;
#if DIM >= 2
                below[1] = c.below;
                above[1] = c.above;
#endif
#if DIM == 3
                below[2] = c.back;
                above[2] = c.front;
#endif
                const Faces f = hancock_faces(c.here, below, above, gas, half_dt_dx);
                c.x_lo = f.lo[0];
                row_hi[t + 1].w = f.hi[0];
#if DIM >= 2
                if (r >= j0) lab_flux(c.top, f.lo[1], 1, gas, dt_dy, y_hi);
                c.top = f.hi[1];
#endif
#if DIM == 3
                // The z neighbours' faces toward this cell, predicted here too.
                if (r >= j0 && r < j1 && own_column) {
                    const Faces back = plane_neighbour_faces(
                        g, i, r, k - 1, c.back, lab_prim(g, i, r, k - 2), c.here, gas,
                        half_dt_dx);
                    const Faces front = plane_neighbour_faces(
                        g, i, r, k + 1, c.front, c.here, lab_prim(g, i, r, k + 2), gas,
                        half_dt_dx);
                    lab_flux(back.hi[2], f.lo[2], 2, gas, dt_dz, z_lo);
                    lab_flux(f.hi[2], front.lo[2], 2, gas, dt_dz, z_hi);
                }
#endif
            }
            if (r > j0 && own_column) {
                const RowFlux x_lo = row_flux[t], x_hi = row_flux[t + 1];
                real next[NVAR];
#if DIM == 3
                update_cell(out + plane + (r - 1) * nx + i, ncell, c.old, c.old, x_lo.f, x_hi.f,
                            c.y_lo, y_hi, c.z_lo, c.z_hi, false, R(1), next);
#elif DIM == 2
                update_cell(out + (r - 1) * nx + i, ncell, c.old, c.old, x_lo.f, x_hi.f, c.y_lo,
                            y_hi, false, R(1), next);
#else
                update_cell(out + (r - 1) * nx + i, ncell, c.old, c.old, x_lo.f, x_hi.f,
                            nullptr, nullptr, false, R(1), next);
#endif
                c.rate = fmax(c.rate, state_rate(next, gamma, inv_dx, inv_dy, inv_dz));
            }
#if DIM >= 2
            for (int v = 0; v < NVAR; ++v) c.y_lo[v] = y_hi[v];
#endif
#if DIM == 3
            for (int v = 0; v < NVAR; ++v) {
                c.z_lo[v] = z_lo[v];
                c.z_hi[v] = z_hi[v];
            }
#endif
        }
        __syncthreads();

        // Row r's x fluxes: each column's through its low face.
        PHASE {
            if (r >= j0 && r < j1) {
                RowFlux f;
                lab_flux(row_hi[threadIdx.x].w, MY(col).x_lo, 0, gas, dt_dx, f.f);
                row_flux[threadIdx.x] = f;
            }
        }
        __syncthreads();
    }

    // The next dt: every block's largest stability rate of the new state, reduced by the last.
    PHASE { block_rates[threadIdx.x] = MY(col).rate; }
    close_step(block_rates, rates, tickets, last, ctrl, parity, cfl);
}
