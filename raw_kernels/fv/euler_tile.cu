// Compressible Euler equations, finite volumes (the scheme: euler_scheme.h): the stage kernel
// for small 2D grids.
#include "euler_scheme.h"
#include "euler_tile.h"

// A stage for small 2D grids, where the march's chain of rows is the latency: a block of
// TILE_X x TILE_Y threads, one cell each, treats all its rows at once. Each thread computes the
// fluxes through its cell's high x and high y faces, from the same states and in the same
// operations as the march (same bits); the threads of column 0 and row 0 only supply the low
// faces of their neighbours, so a block updates (TILE_X - 1) x (TILE_Y - 1) cells. Block
// (bx, by) updates cells i0 + 1 .., j0 + 1 .. with i0 = bx (TILE_X - 1) - 1, j0 = by (TILE_Y - 1)
// - 1. Arguments, roles and rates as for euler_stage (euler.cu), less `rows`. 32 x 8: a warp
// reads a row of 32 consecutive cells, and 217 of the 256 threads update a cell; smaller tiles
// spend more of their threads on low faces only, larger ones leave a small grid fewer blocks
// to spread over the multiprocessors (the tiles compared: docs/euler_performance.md).
//
// Compile-time (besides the scheme's, see euler_scheme.h), from solvers/fv/euler.py: TILE_X and
// TILE_Y, the block shape (TILE_SHAPE there).

// The cells read besides the threads' own: per thread row one column left and two right, per
// thread column one row below and two above (no corners).
#define TILE_HALO_CELLS (3 * (TILE_X + TILE_Y))

// What a tile thread keeps from its loads to its update: u and u0 of its cell.
struct TileCell {
    real old[NVAR], start[NVAR];
};

// The flux (times dt_dx) through the face between c1 and c2 of four consecutive cells c0 .. c3
// along axis dir: c1's high face state against c2's low one, each reconstructed over three
// cells.
DEVICE void face_flux(const Prim& c0, const Prim& c1, const Prim& c2, const Prim& c3, int dir,
                      const Gas& gas, real dt_dx, real f[NVAR])
{
    const Prim left = face_state(c1, half_slopes(c0, c1, c2), 1);
    const Prim right = face_state(c2, half_slopes(c1, c2, c3), -1);
    lab_flux(left, right, dir, gas, dt_dx, f);
}

BLOCK_KERNEL LAUNCH_BOUNDS(TILE_THREADS, TILE_BLOCKS_PER_SM)
void euler_stage_tile(real* state_a, real* state_b, real* scratch,
                      const int* __restrict__ parity, int u_role, int out_role,
                      const real* __restrict__ dt_dev, const real* __restrict__ inflow,
                      real* __restrict__ rates, int nx, int ny, int bc_xlo, int bc_xhi,
                      int bc_ylo, int bc_yhi, real inv_dx, real inv_dy, real gamma,
                      real inv_gm1, real w, int write_rates)
{
    // Entry [b][a]: cell (i0 - 1 + a, j0 - 1 + b); thread (tx, ty) at [ty + 1][tx + 1].
    __shared__ SharedPrim cells[TILE_Y + 3][TILE_X + 3];
    // Flux (times dt/dx) through the high x (y) face of thread (tx, ty)'s cell, variable v.
    __shared__ real flux_x[NVAR][TILE_Y][TILE_X], flux_y[NVAR][TILE_Y][TILE_X];
    __shared__ real block_rates[TILE_THREADS];
    THREAD_STATE(TileCell, cell);

    // Block-uniform values (the same in every thread, so they may live across barriers).
    const real dt = dt_dev[0];
    if (dt == R(0)) return;
    const StageBuffers buf = stage_buffers(u_role, out_role, parity, state_a, state_b, scratch);
    const int i0 = (int)blockIdx.x * (TILE_X - 1) - 1, j0 = (int)blockIdx.y * (TILE_Y - 1) - 1;
    const int ncell = nx * ny;
    const Grid g = {buf.u, inflow, nx, ny, bc_xlo, bc_xhi, bc_ylo, bc_yhi, gamma};
    const Gas gas = {gamma, inv_gm1};

    // Every state at once: the thread's cell (and its u, u0 for the update), then the halo.
    PHASE {
        const int tx = threadIdx.x, ty = threadIdx.y, i = i0 + tx, j = j0 + ty;
        TileCell& c = MY(cell);
        if (i >= 0 && i < nx && j >= 0 && j < ny) {
            load_cell(buf.u, ncell, j * nx + i, c.old);
            if (w != R(1)) load_cell(buf.u0, ncell, j * nx + i, c.start);
            cells[ty + 1][tx + 1].w = conserved_prim(c.old, R(1), R(1), gamma);
        } else {
            cells[ty + 1][tx + 1].w = lab_prim(g, i, j);
        }
        for (int h = ty * TILE_X + tx; h < TILE_HALO_CELLS; h += TILE_THREADS) {
            int a, b;
            if (h < 3 * TILE_Y) {  // columns 0, TILE_X + 1, TILE_X + 2 of the threads' rows
                a = h % 3 == 0 ? 0 : TILE_X + h % 3;
                b = h / 3 + 1;
            } else {  // rows 0, TILE_Y + 1, TILE_Y + 2 of the threads' columns
                const int k = h - 3 * TILE_Y;
                a = k % TILE_X + 1;
                b = k / TILE_X == 0 ? 0 : TILE_Y + k / TILE_X;
            }
            cells[b][a].w = lab_prim(g, i0 - 1 + a, j0 - 1 + b);
        }
    }
    __syncthreads();

    // The fluxes through the cell's high x and y faces.
    PHASE {
        const int tx = threadIdx.x, ty = threadIdx.y, a = tx + 1, b = ty + 1;
        real f[NVAR];
        face_flux(cells[b][a - 1].w, cells[b][a].w, cells[b][a + 1].w, cells[b][a + 2].w, 0, gas,
                  dt * inv_dx, f);
        for (int v = 0; v < NVAR; ++v) flux_x[v][ty][tx] = f[v];
        face_flux(cells[b - 1][a].w, cells[b][a].w, cells[b + 1][a].w, cells[b + 2][a].w, 1, gas,
                  dt * inv_dy, f);
        for (int v = 0; v < NVAR; ++v) flux_y[v][ty][tx] = f[v];
    }
    __syncthreads();

    // Update the cells of the threads past column 0 and row 0, in the order of the march.
    PHASE {
        const int tx = threadIdx.x, ty = threadIdx.y, i = i0 + tx, j = j0 + ty;
        real rate = R(0);
        if (tx > 0 && ty > 0 && i < nx && j < ny) {
            real x_lo[NVAR], x_hi[NVAR], y_lo[NVAR], y_hi[NVAR];
            for (int v = 0; v < NVAR; ++v) {
                x_lo[v] = flux_x[v][ty][tx - 1];
                x_hi[v] = flux_x[v][ty][tx];
                y_lo[v] = flux_y[v][ty - 1][tx];
                y_hi[v] = flux_y[v][ty][tx];
            }
            real next[NVAR];
            update_cell(buf.out + j * nx + i, ncell, MY(cell).old, MY(cell).start, x_lo, x_hi,
                        y_lo, y_hi, w != R(1), w, next);
            if (write_rates) rate = state_rate(next, gamma, inv_dx, inv_dy);
        }
        block_rates[ty * TILE_X + tx] = rate;
    }
    if (write_rates) {
        block_max(block_rates);
        PHASE {
            if (threadIdx.x == 0 && threadIdx.y == 0)
                rates[blockIdx.y * gridDim.x + blockIdx.x] = block_rates[0];
        }
    }
}
