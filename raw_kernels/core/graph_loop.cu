// The condition kernel of a device-side loop (a CUDA conditional WHILE graph node, CUDA >= 12.4).
// CUDA only: the host backend runs its loops as a plain C++/Python loop, so this file is not in
// the kernel dialect. It is compiled to PTX and loaded through the driver's JIT, which resolves
// the cudart builtin below without linking the device runtime library; declaring it here keeps
// the source free of CUDA headers.
typedef __device_builtin__ unsigned long long cudaGraphConditionalHandle;
extern "C" __device__ __cudart_builtin__ void cudaGraphSetConditional(
    cudaGraphConditionalHandle handle, unsigned int value);

// Run the loop body again while flag[0] is 0 (e.g. a Krylov solve's status "running").
extern "C" __global__ void set_loop_condition(cudaGraphConditionalHandle handle,
                                              const int* __restrict__ flag)
{
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        cudaGraphSetConditional(handle, flag[0] == 0 ? 1u : 0u);
    }
}
