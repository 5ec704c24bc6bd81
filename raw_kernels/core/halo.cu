// Blocks of a decomposed structured grid stored padded by a one-cell halo (driver:
// solvers/backend/halo.py). A block of nx x ny (x nz) cells is an array of extents px = nx + 2,
// py = ny + 2 and pz = nz + 2 in 3D or 1 in 2D (no halo along z), x fastest; cell (i, j, k) of
// the block lies at (i + 1) + px ((j + 1) + py (k + oz)), oz = 1 in 3D and 0 in 2D.
//
//   halo_pack    the two layers next to the sides of one axis (the block's first and last
//                cells along it) over the whole padded cross-section, into buf[2][cross]
//   halo_unpack  buf[2][cross] into the halo layers of the sides marked in `sides` (bit 0 low,
//                bit 1 high); the others keep their values
//   pad_copy     between a packed vector of the block's cells (i + nx (j + ny k)) and the cells
//                of a padded array, either way
// Whole cross-sections (the halo cells of the other axes included) travel, so exchanging the
// axes one after the other also fills the edge and corner cells of the halo.
//
// A grid gathered onto every rank (the multigrid's coarse level, linalg/distributed_multigrid.py):
//   blocks_unpack  the whole grid from every rank's block of it, gathered one slot a rank
//   whole_mean     the mean of a whole grid's values, in double (one block)
//   keep_block     a block and the halo around it out of the whole grid, into a padded array
#include "prelude.h"
#include "reduce.h"

// Threads of a whole_mean block (a power of two).
#define MEAN_THREADS 256

// The padded extent along each axis and the flat-index stride of each.
DEVICE void padded_axes(int px, int py, int pz, int* extent, int* stride)
{
    extent[0] = px;
    extent[1] = py;
    extent[2] = pz;
    stride[0] = 1;
    stride[1] = px;
    stride[2] = px * py;
}

// The flat index of element e of the cross-section of `axis` in layer `layer` along it.
DEVICE int cross_index(int e, int layer, int axis, const int* extent, const int* stride)
{
    const int u = axis == 0 ? 1 : 0, v = axis == 2 ? 1 : 2;
    return layer * stride[axis] + (e % extent[u]) * stride[u] + (e / extent[u]) * stride[v];
}

KERNEL void halo_pack(const real* __restrict__ a, real* __restrict__ buf, int px, int py, int pz,
                      int axis)
{
    int extent[3], stride[3];
    padded_axes(px, py, pz, extent, stride);
    const int cross = extent[0] * extent[1] * extent[2] / extent[axis];
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= 2 * cross) return;
    const int side = t / cross, e = t % cross;
    buf[t] = a[cross_index(e, side == 0 ? 1 : extent[axis] - 2, axis, extent, stride)];
}

KERNEL void halo_unpack(real* __restrict__ a, const real* __restrict__ buf, int px, int py,
                        int pz, int axis, int sides)
{
    int extent[3], stride[3];
    padded_axes(px, py, pz, extent, stride);
    const int cross = extent[0] * extent[1] * extent[2] / extent[axis];
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= 2 * cross) return;
    const int side = t / cross, e = t % cross;
    if (!((sides >> side) & 1)) return;
    a[cross_index(e, side == 0 ? 0 : extent[axis] - 1, axis, extent, stride)] = buf[t];
}

// to_padded 1: padded[cell] = packed[cell]; 0: packed[cell] = padded[cell].
KERNEL void pad_copy(real* __restrict__ packed, real* __restrict__ padded, int nx, int ny, int nz,
                     int oz, int to_padded)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nx) return;
    for (int k = blockIdx.z; k < nz; k += gridDim.z) {
        for (int j = blockIdx.y * blockDim.y + threadIdx.y; j < ny; j += blockDim.y * gridDim.y) {
            const int c = i + nx * (j + ny * k);
            const int p = (i + 1) + (nx + 2) * ((j + 1) + (ny + 2) * (k + oz));
            if (to_padded) padded[p] = packed[c];
            else packed[c] = padded[p];
        }
    }
}

// whole (nx x ny x nz cells, x fastest) from buf[rank][slot]: rank r's block of it, its cells
// x fastest from the start of its slot. boxes: 6 ints a rank, its block's first cell and its
// cells along x, y, z. One thread a value of buf (the slots' ends past a block: none).
KERNEL void blocks_unpack(real* __restrict__ whole, const real* __restrict__ buf,
                          const int* __restrict__ boxes, int ranks, int slot, int nx, int ny)
{
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= ranks * slot) return;
    const int* box = boxes + 6 * (e / slot);
    const int c = e % slot;
    if (c >= box[3] * box[4] * box[5]) return;
    const int i = box[0] + c % box[3], j = box[1] + (c / box[3]) % box[4];
    const int k = box[2] + c / (box[3] * box[4]);
    whole[i + nx * (j + ny * k)] = buf[e];
}

// mean[0] = the mean of values[0 .. n), added in double in a fixed order. One block of
// MEAN_THREADS threads.
REDUCTION BLOCK_KERNEL void whole_mean(const real* __restrict__ values, int n,
                                       double* __restrict__ mean)
{
    __shared__ double s[MEAN_THREADS];
    PHASE {
        double sum = 0.0;
        for (int c = threadIdx.x; c < n; c += blockDim.x) sum += (double)values[c];
        s[threadIdx.x] = sum;
    }
    block_sum(s);
    PHASE {
        if (threadIdx.x == 0) mean[0] = s[0] / (double)n;
    }
}

// The padded array (extents px, py, pz) of the block whose first cell is (sx, sy, sz) in whole
// (nx x ny x nz cells): padded cell (i, j, k) is whole's cell (sx + i - 1, sy + j - 1,
// sz + k - oz), oz = 1 in 3D and 0 in 2D, wrapped along the axes whose bit is set in `wrap`;
// a cell beyond an end of an axis that does not wrap is 0 (a halo never read). With `centre`,
// whole's values less mean[0] (in double). One thread a padded cell.
REDUCTION KERNEL void keep_block(const real* __restrict__ whole, real* __restrict__ padded,
                                 int px, int py, int pz, int sx, int sy, int sz, int nx, int ny,
                                 int nz, int wrap, const double* __restrict__ mean, int centre)
{
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= px * py * pz) return;
    const int start[3] = {sx - 1, sy - 1, sz - (pz > 1 ? 1 : 0)};
    const int index[3] = {p % px, (p / px) % py, p / (px * py)};
    const int n[3] = {nx, ny, nz};
    int cell[3];
    for (int a = 0; a < 3; ++a) {
        cell[a] = start[a] + index[a];
        if ((wrap >> a) & 1) cell[a] = (cell[a] + n[a]) % n[a];
        if (cell[a] < 0 || cell[a] >= n[a]) {
            padded[p] = R(0);
            return;
        }
    }
    const real value = whole[cell[0] + nx * (cell[1] + ny * cell[2])];
    padded[p] = centre ? (real)((double)value - mean[0]) : value;
}
