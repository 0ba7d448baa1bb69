/* A stand-in for the CUDA driver (libcuda.so.1) that records kernel launches instead of running them.
 * It lets the tests drive an exported library's host code on a machine without a GPU: module loading,
 * the grid computed from the runtime dims, and which kernel each launch names. */
#include <string.h>

typedef int CUresult;
#define MAX_LAUNCHES 64

int stub_count = 0;
unsigned stub_dims[MAX_LAUNCHES][6];          /* grid x, y, z, block x, y, z */
const char *stub_names[MAX_LAUNCHES];

CUresult cuModuleGetFunction(void **f, void *module, const char *name) { *f = (void *)name; return 0; }
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void *stream, void **params, void **extra) {
  if (stub_count < MAX_LAUNCHES) {
    unsigned d[6] = {gx, gy, gz, bx, by, bz};
    memcpy(stub_dims[stub_count], d, sizeof d);
    stub_names[stub_count] = (const char *)f;
    stub_count++;
  }
  return 0;
}
static CUresult handle(void **out) { *out = (void *)0x1; return 0; }
CUresult cuModuleLoadData(void **m, const void *image) { return handle(m); }
CUresult cuModuleLoadDataEx(void **m, const void *image, unsigned n, void *o, void **v) { return handle(m); }
CUresult cuStreamCreate(void **s, unsigned flags) { return handle(s); }
CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) { return handle(ctx); }
CUresult cuEventCreate(void **e, unsigned flags) { return handle(e); }
CUresult cuDeviceGet(int *dev, int ordinal) { *dev = 0; return 0; }
CUresult cuDeviceGetAttribute(int *v, int attribute, int dev) { *v = 0; return 0; }
CUresult cuGetErrorName(CUresult e, const char **s) { *s = "CUDA_SUCCESS"; return 0; }
#define OK(name) CUresult name() { return 0; }
OK(cuInit) OK(cuCtxPushCurrent_v2) OK(cuCtxPopCurrent_v2) OK(cuStreamSynchronize) OK(cuStreamDestroy_v2)
OK(cuModuleUnload) OK(cuEventDestroy_v2) OK(cuEventRecord) OK(cuEventSynchronize) OK(cuFuncSetAttribute)
OK(cuLaunchKernelEx) OK(cuMemAllocManaged) OK(cuMemAlloc_v2) OK(cuMemFree_v2) OK(cuMemHostRegister_v2)
OK(cuMemHostUnregister) OK(cuMemcpy) OK(cuMemcpyAsync) OK(cuMemsetD16Async) OK(cuMemsetD32Async)
OK(cuStreamWaitEvent) OK(cuTensorMapEncodeTiled)
