// The velocity halos of a decomposed 2D MAC grid's block (driver:
// solvers/fv/incompressible/block.py): boxes of the face arrays u and v (mac.h's layout, G
// ghost layers) copied to or from one contiguous buffer, the layers a neighbouring block's
// predictor reads (packed) or the ghosts they fill (unpacked).
//
// boxes: BOX_INTS ints a box, (array: 0 u, 1 v; first column and row of the padded array;
// columns; rows; offset of its first value in the buffer), in buffer order; a box's values lie
// in the buffer row after row. One thread a buffer value.
#include "prelude.h"

#define BOX_INTS 6

KERNEL void mac_halo_copy(real* __restrict__ u, real* __restrict__ v,
                          real* __restrict__ buffer, const int* __restrict__ boxes, int count,
                          int total, int su, int sv, int unpack)
{
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= total) return;
    // The box holding buffer value e: the last whose offset is at most e.
    int k = 0;
    while (k + 1 < count && boxes[(k + 1) * BOX_INTS + 5] <= e) ++k;
    const int* box = boxes + k * BOX_INTS;
    const int local = e - box[5], columns = box[3];
    const int column = box[1] + local % columns, row = box[2] + local / columns;
    real* a = box[0] == 0 ? u + column + row * su : v + column + row * sv;
    if (unpack) *a = buffer[e];
    else buffer[e] = *a;
}
