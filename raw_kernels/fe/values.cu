// Nodal values of an expression of x, y, z, t evaluated on the device, so that boundary values
// and sources that change in time are refreshed inside a captured time step
// (solvers/fe/time_values.py translates the case expression to C).
//
// Defines: GDIM (2 or 3), VALUE (the expression of the locals x, y, z, t, in `real`
// arithmetic).
#include "prelude.h"

// out[nodes[k]] = VALUE(coordinates of nodes[k], times[which]), one thread per listed node.
// REDUCTION only because CUDA's float sin, cos and tan reduce huge arguments (|x| > 1e5) in a
// slow path with FP64 instructions; the arithmetic here is `real`.
REDUCTION KERNEL void fe_nodal_values(const int* __restrict__ nodes, const real* __restrict__ points,
                            const real* __restrict__ times, int which, real* __restrict__ out,
                            int count)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count) return;
    const int node = nodes[k];
    const real x = points[node * GDIM], y = points[node * GDIM + 1];
    const real z = GDIM == 3 ? points[node * GDIM + GDIM - 1] : R(0);
    const real t = times[which];
    (void)x; (void)y; (void)z; (void)t;  // an expression need not use them all
    out[node] = VALUE;
}
