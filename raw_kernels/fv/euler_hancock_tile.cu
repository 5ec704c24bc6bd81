// Compressible Euler equations, finite volumes: a MUSCL-Hancock step (euler_hancock.h) in one
// launch, for small 2D grids, where the march's chain of rows (euler_hancock.cu) is the
// latency. A block of TILE_X x TILE_Y threads, one cell each, treats all its rows at once:
// every thread predicts its cell's face states, then computes the fluxes through its cell's low
// x and low y faces, and the threads past the tile's edge rows and columns update their cells,
// so a block updates (TILE_X - 2) x (TILE_Y - 2) cells. Block (bx, by) updates cells i0 + 1 ..,
// j0 + 1 .. with i0 = bx (TILE_X - 2) - 1, j0 = by (TILE_Y - 2) - 1. Every state, predicted face
// and flux comes from the same inputs in the same operations as in the march (the same bits),
// and the last block to finish advances the clock (close_step, clock.h).
//
// Compile-time (besides the scheme's, see euler_scheme.h), from solvers/fv/euler.py: TILE_X and
// TILE_Y, the block shape (HANCOCK_TILE_SHAPE there).
#include "euler_hancock.h"
#include "euler_tile.h"
#include "clock.h"

// What a thread keeps from one phase to the next: u of its cell, its predicted low faces and
// the predicted states beyond them (of its left and lower neighbours' high faces).
struct HancockCell {
    real old[NVAR];
    Prim x_lo, y_lo, left, lower;
};

// One MUSCL-Hancock step, out = u + dt L(u), with the arguments of euler_hancock (less nz,
// rows and the z sides and spacing).
BLOCK_KERNEL LAUNCH_BOUNDS(TILE_THREADS, TILE_BLOCKS_PER_SM)
void euler_hancock_tile(real* state_a, real* state_b, int* parity, double* ctrl, real* rates,
                        int* tickets, const real* __restrict__ inflow, int nx, int ny,
                        int bc_xlo, int bc_xhi, int bc_ylo, int bc_yhi, real inv_dx,
                        real inv_dy, real gamma, real inv_gm1, real cfl)
{
    // Entry [b][a]: cell (i0 - 1 + a, j0 - 1 + b); thread (tx, ty) at [ty + 1][tx + 1].
    __shared__ SharedPrim cells[TILE_Y + 2][TILE_X + 2];
    // First thread (tx, ty)'s predicted states at its high x and y faces, then the fluxes
    // (times dt/dx, dt/dy) through its low x and y faces, in the same memory: 48 KB hold a
    // block in fp64.
    __shared__ union {
        SharedPrim high[DIM][TILE_Y][TILE_X];
        real flux[DIM][NVAR][TILE_Y][TILE_X];
    } faces;
    __shared__ real block_rates[TILE_THREADS];
    __shared__ real step_dt[1];
    __shared__ int taken[1], last[1];
    THREAD_STATE(HancockCell, cell);

    // This step's dt, the same in every block.
    PHASE {
        if (threadIdx.x == 0 && threadIdx.y == 0)
            taken[0] = step_begins(ctrl, blockIdx.x + blockIdx.y == 0, step_dt);
    }
    __syncthreads();
    if (!taken[0]) return;

    // Block-uniform values (the same in every thread, so they may live across barriers).
    const real dt = step_dt[0];
    const real* __restrict__ u = step_input(state_a, state_b, parity);
    real* out = step_output(state_a, state_b, parity);
    const real dt_dx = dt * inv_dx, dt_dy = dt * inv_dy;
    const real half_dt_dx[DIM] = {R(0.5) * dt_dx, R(0.5) * dt_dy};
    const int i0 = (int)blockIdx.x * (TILE_X - 2) - 1, j0 = (int)blockIdx.y * (TILE_Y - 2) - 1;
    const int ncell = nx * ny;
    const Grid g = {u, inflow, nx, ny, bc_xlo, bc_xhi, bc_ylo, bc_yhi, gamma};
    const Gas gas = {gamma, inv_gm1};

    // Every state at once: the thread's cell (and its u for the update), then the ring of
    // cells around the threads' (no corners: the predictor reads along the axes only).
    PHASE {
        const int tx = threadIdx.x, ty = threadIdx.y, i = i0 + tx, j = j0 + ty;
        HancockCell& c = MY(cell);
        if (i >= 0 && i < nx && j >= 0 && j < ny) {
            load_cell(u, ncell, j * nx + i, c.old);
            cells[ty + 1][tx + 1].w = conserved_prim(c.old, R(1), R(1), gamma);
        } else {
            cells[ty + 1][tx + 1].w = lab_prim(g, i, j);
        }
        for (int h = ty * TILE_X + tx; h < 2 * (TILE_X + TILE_Y); h += TILE_THREADS) {
            int a, b;
            if (h < 2 * TILE_Y) {  // columns 0 and TILE_X + 1 of the threads' rows
                a = h % 2 == 0 ? 0 : TILE_X + 1;
                b = h / 2 + 1;
            } else {  // rows 0 and TILE_Y + 1 of the threads' columns
                const int k = h - 2 * TILE_Y;
                a = k % TILE_X + 1;
                b = k / TILE_X == 0 ? 0 : TILE_Y + 1;
            }
            cells[b][a].w = lab_prim(g, i0 - 1 + a, j0 - 1 + b);
        }
    }
    __syncthreads();

    // The cell's predicted face states: the low ones kept, the high ones published.
    PHASE {
        const int tx = threadIdx.x, ty = threadIdx.y, a = tx + 1, b = ty + 1;
        const Prim below[DIM] = {cells[b][a - 1].w, cells[b - 1][a].w};
        const Prim above[DIM] = {cells[b][a + 1].w, cells[b + 1][a].w};
        const Faces f = hancock_faces(cells[b][a].w, below, above, gas, half_dt_dx);
        MY(cell).x_lo = f.lo[0];
        MY(cell).y_lo = f.lo[1];
        faces.high[0][ty][tx].w = f.hi[0];
        faces.high[1][ty][tx].w = f.hi[1];
    }
    __syncthreads();

    // The states beyond the cell's low faces (past the tile's first column, row).
    PHASE {
        const int tx = threadIdx.x, ty = threadIdx.y;
        if (tx > 0) MY(cell).left = faces.high[0][ty][tx - 1].w;
        if (ty > 0) MY(cell).lower = faces.high[1][ty - 1][tx].w;
    }
    __syncthreads();

    // The fluxes through the cell's low x and low y faces.
    PHASE {
        const int tx = threadIdx.x, ty = threadIdx.y;
        real f[NVAR];
        if (tx > 0) {
            lab_flux(MY(cell).left, MY(cell).x_lo, 0, gas, dt_dx, f);
            for (int v = 0; v < NVAR; ++v) faces.flux[0][v][ty][tx] = f[v];
        }
        if (ty > 0) {
            lab_flux(MY(cell).lower, MY(cell).y_lo, 1, gas, dt_dy, f);
            for (int v = 0; v < NVAR; ++v) faces.flux[1][v][ty][tx] = f[v];
        }
    }
    __syncthreads();

    // Update the cells of the threads inside the tile's edge rows and columns.
    PHASE {
        const int tx = threadIdx.x, ty = threadIdx.y, i = i0 + tx, j = j0 + ty;
        real rate = R(0);
        if (tx > 0 && tx < TILE_X - 1 && ty > 0 && ty < TILE_Y - 1 && i < nx && j < ny) {
            real x_lo[NVAR], x_up[NVAR], y_lo[NVAR], y_up[NVAR];
            for (int v = 0; v < NVAR; ++v) {
                x_lo[v] = faces.flux[0][v][ty][tx];
                x_up[v] = faces.flux[0][v][ty][tx + 1];
                y_lo[v] = faces.flux[1][v][ty][tx];
                y_up[v] = faces.flux[1][v][ty + 1][tx];
            }
            real next[NVAR];
            update_cell(out + j * nx + i, ncell, MY(cell).old, MY(cell).old, x_lo, x_up, y_lo,
                        y_up, false, R(1), next);
            rate = state_rate(next, gamma, inv_dx, inv_dy);
        }
        block_rates[ty * TILE_X + tx] = rate;
    }

    // The next dt: every block's largest stability rate of the new state, reduced by the last.
    close_step(block_rates, rates, tickets, last, ctrl, parity, cfl);
}
