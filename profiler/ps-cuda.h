/* ps-cuda.h: the CUDA driver, NVRTC and CUPTI entry points planscope uses,
 * as tables of function pointers filled at run time (dlopen, and
 * cuGetProcAddress for the driver).  Only the GPU backend includes this;
 * it needs the toolkit's headers for the types and nothing else. */
#ifndef PS_CUDA_H
#define PS_CUDA_H

#include <cuda.h>
#include <cupti.h>
#include <nvrtc.h>

#include "ps-profiler-private.h"

/* The driver entry points.  The ABI of each is the one of CUDA 12.0, which
 * is what they are requested for, and what the headers declare. */
#define PS__CU_FUNCS(X)                                                           \
  X (cuInit) X (cuDriverGetVersion) X (cuDeviceGetCount) X (cuDeviceGet)          \
  X (cuDeviceGetName) X (cuDeviceGetAttribute) X (cuDeviceTotalMem)              \
  X (cuDevicePrimaryCtxRetain) X (cuDevicePrimaryCtxRelease) X (cuCtxSetCurrent)  \
  X (cuCtxSynchronize) X (cuModuleLoadDataEx) X (cuModuleGetFunction)             \
  X (cuModuleUnload) X (cuFuncSetAttribute) X (cuFuncGetAttribute)                \
  X (cuOccupancyMaxActiveBlocksPerMultiprocessor) X (cuLaunchKernel)              \
  X (cuLaunchHostFunc) X (cuMemAlloc) X (cuMemFree) X (cuMemAllocHost)            \
  X (cuMemFreeHost) X (cuMemcpyHtoD) X (cuMemcpyDtoH) X (cuMemcpyHtoDAsync)       \
  X (cuMemcpyDtoHAsync) X (cuMemcpyDtoDAsync) X (cuMemsetD8Async) X (cuMemsetD8)  \
  X (cuStreamCreate) X (cuStreamDestroy) X (cuStreamSynchronize)                  \
  X (cuStreamWaitEvent) X (cuEventCreate) X (cuEventRecord) X (cuEventDestroy)    \
  X (cuStreamBeginCapture) X (cuStreamEndCapture) X (cuGraphInstantiateWithFlags) \
  X (cuGraphLaunch) X (cuGraphExecDestroy) X (cuGraphDestroy)

/* Entry points that may be missing (older drivers); NULL then. */
#define PS__CU_OPTIONAL(X) X (cuGetErrorName) X (cuGetErrorString) X (cuFuncGetParamInfo)

#define PS__FIELD(name) __typeof__ (&name) name;

typedef struct ps__cuda {
  void *lib;
  int driver_version;
  PS__CU_FUNCS (PS__FIELD)
  PS__CU_OPTIONAL (PS__FIELD)
} ps__cuda;

#define PS__NVRTC_FUNCS(X)                                                        \
  X (nvrtcVersion) X (nvrtcGetErrorString) X (nvrtcCreateProgram)                 \
  X (nvrtcDestroyProgram) X (nvrtcCompileProgram) X (nvrtcGetPTXSize) X (nvrtcGetPTX) \
  X (nvrtcGetProgramLogSize) X (nvrtcGetProgramLog) X (nvrtcAddNameExpression)    \
  X (nvrtcGetLoweredName)
#define PS__NVRTC_OPTIONAL(X) \
  X (nvrtcGetCUBINSize) X (nvrtcGetCUBIN) X (nvrtcGetNumSupportedArchs) X (nvrtcGetSupportedArchs)

typedef struct ps__nvrtc {
  void *lib;
  int major, minor;
  int arch_lo, arch_hi; /* compute capabilities it targets, e.g. 75 .. 121 */
  PS__NVRTC_FUNCS (PS__FIELD)
  PS__NVRTC_OPTIONAL (PS__FIELD)
} ps__nvrtc;

#define PS__CUPTI_FUNCS(X)                                                        \
  X (cuptiGetResultString) X (cuptiActivityEnable) X (cuptiActivityDisable)       \
  X (cuptiActivityRegisterCallbacks) X (cuptiActivityFlushAll)                    \
  X (cuptiActivityGetNextRecord) X (cuptiActivityGetNumDroppedRecords)            \
  X (cuptiActivityPushExternalCorrelationId) X (cuptiActivityPopExternalCorrelationId) \
  X (cuptiGetTimestamp) X (cuptiSubscribe) X (cuptiUnsubscribe) X (cuptiEnableCallback) \
  X (cuptiGetGraphNodeId)

typedef struct ps__cupti {
  void *lib;
  PS__CUPTI_FUNCS (PS__FIELD)
} ps__cupti;

/* Process-wide tables, loaded once and kept (unloading CUDA libraries is
 * not safe while their threads may run).  Each returns 0 or a PS_E* code
 * with err classified. */
int ps__cuda_load (const ps__cuda **out, ps_gpu_error *err);
int ps__nvrtc_get (const ps__nvrtc **out, ps_gpu_error *err);
int ps__cupti_load (const ps__cupti **out, ps_gpu_error *err);


/* Sets err for a failed driver call: "WHAT failed: NAME (text)". */
int ps__cu_fail (ps_gpu_error *err, ps_gpu_status status, CUresult r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__ ((format (printf, 4, 5)))
#endif
    ;
int ps__cupti_fail (ps_gpu_error *err, const ps__cupti *cp, CUptiResult r, const char *what);

#endif
