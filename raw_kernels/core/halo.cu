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
#include "prelude.h"

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
