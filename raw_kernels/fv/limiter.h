// Slope limiters of the MUSCL reconstructions of the finite-volume kernels: half the limited
// slope of a cell from its differences to the left (dl) and right (dr) neighbours (face value =
// cell value +- this), zero at an extremum (dl * dr <= 0).
//
// Compile-time choice of half_slope (the structured kernels):
//   RECONSTRUCTION  1 first order (no slope), 2 MUSCL
//   LIMITER         1 minmod, 2 van Leer, 3 monotonized central (MC)
// The unstructured kernels choose among the three at run time.
#pragma once
#include "prelude.h"

#define LIMITER_MINMOD 1
#define LIMITER_VAN_LEER 2
#define LIMITER_MC 3

DEVICE real minmod_half_slope(real dl, real dr)
{
    // sign(dl) dr < 0 (opposite signs) gives 0 through the max.
    const real sign = copysign(R(1), dl);
    return sign * R(0.5) * fmax(R(0), fmin(fabs(dl), sign * dr));
}

DEVICE real van_leer_half_slope(real dl, real dr)
{
    if (dl * dr <= R(0)) return R(0);
    return dl * dr / (dl + dr);
}

DEVICE real mc_half_slope(real dl, real dr)
{
    // sign(dl) dr < 0 (opposite signs) gives 0 through the max.
    const real sign = copysign(R(1), dl);
    return sign * fmax(R(0), fmin(fmin(fabs(dl), sign * dr), R(0.25) * fabs(dl + dr)));
}

// The limiter `limiter` (LIMITER_*) chosen at run time.
DEVICE real limited_half_slope(int limiter, real dl, real dr)
{
    if (limiter == LIMITER_MINMOD) return minmod_half_slope(dl, dr);
    if (limiter == LIMITER_VAN_LEER) return van_leer_half_slope(dl, dr);
    return mc_half_slope(dl, dr);
}

#ifdef LIMITER
DEVICE real half_slope(real dl, real dr)
{
#if RECONSTRUCTION == 1
    (void)dl;
    (void)dr;
    return R(0);
#elif LIMITER == LIMITER_MINMOD
    return minmod_half_slope(dl, dr);
#elif LIMITER == LIMITER_VAN_LEER
    return van_leer_half_slope(dl, dr);
#else
    return mc_half_slope(dl, dr);
#endif
}
#endif
