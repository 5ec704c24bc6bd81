// Slope limiters of the MUSCL reconstructions of the finite-volume kernels.
//
// Compile-time choice:
//   RECONSTRUCTION  1 first order (no slope), 2 MUSCL
//   LIMITER         1 minmod, 2 van Leer, 3 monotonized central (MC)
#pragma once
#include "prelude.h"

// Half the limited slope of a cell from its differences to the left (dl) and right (dr)
// neighbours: face value = cell value +- this. Zero at an extremum (dl * dr <= 0).
#if RECONSTRUCTION == 1
DEVICE real half_slope(real dl, real dr)
{
    (void)dl;
    (void)dr;
    return R(0);
}
#elif LIMITER == 1
DEVICE real half_slope(real dl, real dr)
{
    // sign(dl) dr < 0 (opposite signs) gives 0 through the max.
    const real sign = copysign(R(1), dl);
    return sign * R(0.5) * fmax(R(0), fmin(fabs(dl), sign * dr));
}
#elif LIMITER == 2
DEVICE real half_slope(real dl, real dr)
{
    if (dl * dr <= R(0)) return R(0);
    return dl * dr / (dl + dr);
}
#else
DEVICE real half_slope(real dl, real dr)
{
    // sign(dl) dr < 0 (opposite signs) gives 0 through the max.
    const real sign = copysign(R(1), dl);
    return sign * fmax(R(0), fmin(fmin(fabs(dl), sign * dr), R(0.25) * fabs(dl + dr)));
}
#endif
