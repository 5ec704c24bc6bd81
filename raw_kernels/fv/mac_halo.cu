// The velocity halos of a decomposed 2D or 3D MAC grid's block (driver:
// solvers/fv/incompressible/block.py): boxes of the face arrays (mac.h's and mac3.h's layouts,
// G ghost layers) copied to or from one contiguous buffer, the layers a neighbouring block's
// predictor reads (packed) or the ghosts they fill (unpacked). And the step's maxima and sums
// over the blocks: each rank folds its own (mac_rank_fold), every rank's are all-gathered, and
// mac_ranks_fold takes the largest, and the sums in rank order, on every rank alike.
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

// The larger of m and v, NaN if either is (a rate that blew up must stop the run everywhere).
DEVICE double nan_max(double m, double v)
{
    return (m != m || v <= m) ? m : v;
}

// This rank's rows of the step's maxima and sums: with rates (nrates > 0) first the largest of
// rates[0 .. nrates), then of each of `maxima` rows of `partials` (count values a row) its
// largest, then of each of `sums` rows its sum in double, in block order. One thread a row.
REDUCTION KERNEL void mac_rank_fold(const real* __restrict__ rates, int nrates,
                                    const real* __restrict__ partials, int count, int maxima,
                                    int sums, double* __restrict__ local)
{
    const int rated = nrates > 0, row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rated + maxima + sums) return;
    const bool rate = rated && row == 0, sum = row >= rated + maxima;
    const real* values = rate ? rates : partials + (row - rated) * count;
    const int n = rate ? nrates : count;
    double folded = sum ? 0.0 : (double)values[0];
    for (int b = 0; b < n; ++b)
        folded = sum ? folded + (double)values[b] : nan_max(folded, (double)values[b]);
    local[row] = folded;
}

// Every rank's rows (gathered[rank][rated + maxima + sums]) folded in rank order: with
// `rated`, rates[0] the largest rate; reduced[] the largest of each maximum, then each sum.
// One thread.
REDUCTION KERNEL void mac_ranks_fold(const double* __restrict__ gathered, int ranks, int rated,
                                     int maxima, int sums, real* __restrict__ rates,
                                     real* __restrict__ reduced)
{
    const int width = rated + maxima + sums;
    for (int row = 0; row < width; ++row) {
        const bool sum = row >= rated + maxima;
        double folded = sum ? 0.0 : gathered[row];
        for (int r = 0; r < ranks; ++r) {
            const double v = gathered[r * width + row];
            folded = sum ? folded + v : nan_max(folded, v);
        }
        if (rated && row == 0) rates[0] = (real)folded;
        else reduced[row - rated] = (real)folded;
    }
}
