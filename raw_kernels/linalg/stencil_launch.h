// The launch constants of the stencil kernels (stencil.cu, stencil_cg.cu), defined by
// solvers/linalg/stencil.py: STENCIL_THREADS, the threads of a block, and STENCIL_LAYERS, the
// z layers a thread walks (1 in 2D).
#pragma once

#ifndef STENCIL_THREADS
#error "STENCIL_THREADS (threads of a block) must be defined"
#endif
#ifndef STENCIL_LAYERS
#error "STENCIL_LAYERS (z layers a thread walks) must be defined"
#endif
