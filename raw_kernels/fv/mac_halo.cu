// The velocity halos of a decomposed 2D or 3D MAC grid's block (driver:
// solvers/fv/incompressible/block.py): boxes of the face arrays (mac.h's and mac3.h's layouts,
// G ghost layers) copied to or from one contiguous buffer, the layers a neighbouring block's
// predictor reads (packed) or the ghosts they fill (unpacked).
//
// boxes: BOX_INTS ints a box, (array: 0 u, 1 v, 2 w; first padded index along x, y, z; counts
// along x, y, z; offset of its first value in the buffer), in buffer order; a box's values lie
// in the buffer x fastest, then y, then z. strides: per array its strides along y and z (2D:
// a z count of 1). One thread a buffer value.
#include "prelude.h"

#define BOX_INTS 8

KERNEL void mac_halo_copy(real* __restrict__ u, real* __restrict__ v, real* __restrict__ w,
                          real* __restrict__ buffer, const int* __restrict__ boxes, int count,
                          int total, int su_y, int su_z, int sv_y, int sv_z, int sw_y, int sw_z,
                          int unpack)
{
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= total) return;
    // The box holding buffer value e: the last whose offset is at most e.
    int k = 0;
    while (k + 1 < count && boxes[(k + 1) * BOX_INTS + 7] <= e) ++k;
    const int* box = boxes + k * BOX_INTS;
    const int local = e - box[7], along_y = local / box[4];
    const int x = box[1] + local % box[4], y = box[2] + along_y % box[5];
    const int z = box[3] + along_y / box[5];
    real* a = box[0] == 0 ? u + x + y * su_y + z * su_z
            : box[0] == 1 ? v + x + y * sv_y + z * sv_z : w + x + y * sw_y + z * sw_z;
    if (unpack) *a = buffer[e];
    else buffer[e] = *a;
}
