// The send side of a decomposed grid's halo exchange (solvers/fv/euler_halo.py): a block's
// boundary layers packed into one contiguous buffer, in the device step, so that only packed
// halos cross to the neighbours (by NCCL inside the step graph, or staged through pinned host
// memory).
#include "euler_state.h"
#include "ssp_stages.h"

// The packed layers of one side: the two cells next to it (layer 0 the nearer) of variable v
// at cross-section index c, as halo_sides lays out a neighbour's halo beyond the same side
// seen from the other block ([v][layer][c]; c = (k ny + j) across x, (k nx + i) across y,
// (j nx + i) across z). side: 0 x_lo, 1 x_hi, 2 y_lo, 3 y_hi, 4 z_lo, 5 z_hi.
DEVICE int packed_cell(int side, int layer, int c, int nx, int ny, int nz)
{
    const bool high = side & 1;
    if (side < 2) {
        const int i = high ? nx - 1 - layer : layer;
        return c * nx + i;  // c = k ny + j
    }
    if (side < 4) {
        const int j = high ? ny - 1 - layer : layer, i = c % nx, k = c / nx;
        return (k * ny + j) * nx + i;
    }
    const int k = high ? nz - 1 - layer : layer;
    return k * nx * ny + c;  // c = j nx + i
}

// send = the two boundary layers of every side whose bit is set in `sides` (bit s for side s)
// of the state a stage of this step reads (role u_role, by the clock's parity), each side's
// block at its offset in the halo layout (halo_sides: all sides of the grid's dimension, a
// side's block 2 NVAR cross long). One thread an entry of a side that is packed.
KERNEL void euler_halo_pack(real* state_a, real* state_b, real* scratch,
                            const int* __restrict__ parity, int u_role,
                            real* __restrict__ send, int sides, int nx, int ny, int nz)
{
    const StageBuffers buffers = stage_buffers(u_role, u_role, parity, state_a, state_b,
                                               scratch);
    const int ncell = nx * ny * nz;
    const int cross[6] = {ny * nz, ny * nz, nx * nz, nx * nz, nx * ny, nx * ny};
    int e = blockIdx.x * blockDim.x + threadIdx.x, offset = 0;
    for (int side = 0; side < 2 * DIM; ++side) {
        const int size = 2 * NVAR * cross[side];
        if (e < size) {
            if (!((sides >> side) & 1)) return;
            const int n = cross[side], v = e / (2 * n), layer = (e / n) % 2, c = e % n;
            send[offset + e] = buffers.u[v * ncell + packed_cell(side, layer, c, nx, ny, nz)];
            return;
        }
        e -= size;
        offset += size;
    }
}
