/* ps-cuda.h: the CUDA driver, NVRTC and CUPTI entry points planscope uses,
 * as tables of function pointers filled at run time (dlopen, and
 * cuGetProcAddress for the driver).  Only the GPU backend includes this;
 * it needs the toolkit's headers for the types and nothing else. */
#ifndef PS_CUDA_H
#define PS_CUDA_H

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cupti.h>
#include <nvrtc.h>

#include "ps-profiler-private.h"

/* The driver entry points, each with the CUDA version of the variant
 * planscope calls: cuGetProcAddress is asked for exactly that version and
 * the pointer has that variant's type (PFN_<name>_v<version> of
 * cudaTypedefs.h).  A newer variant may have another signature
 * (cuCtxSynchronize_v2 of CUDA 13 takes a context), so no symbol is asked
 * for at a later version than its row says; a symbol that is newer than
 * the CUDA 12.0 that planscope needs is optional. */
#define PS__CU_FUNCS(X)                                                                \
  X (cuInit, 2000) X (cuDriverGetVersion, 2020) X (cuDeviceGetCount, 2000)               \
  X (cuDeviceGet, 2000) X (cuDeviceGetName, 2000) X (cuDeviceGetAttribute, 2000)         \
  X (cuDeviceTotalMem, 3020) X (cuDevicePrimaryCtxRetain, 7000)                          \
  X (cuDevicePrimaryCtxRelease, 11000) X (cuCtxSetCurrent, 4000)                         \
  X (cuCtxSynchronize, 2000) X (cuModuleLoadDataEx, 2010) X (cuModuleGetFunction, 2000)  \
  X (cuModuleUnload, 2000) X (cuFuncSetAttribute, 9000) X (cuFuncGetAttribute, 2020)     \
  X (cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050) X (cuLaunchKernel, 4000)         \
  X (cuLaunchHostFunc, 10000) X (cuMemAlloc, 3020) X (cuMemFree, 3020)                   \
  X (cuMemAllocHost, 3020) X (cuMemFreeHost, 2000) X (cuMemcpyHtoD, 3020)                \
  X (cuMemcpyDtoH, 3020) X (cuMemcpyHtoDAsync, 3020) X (cuMemcpyDtoHAsync, 3020)         \
  X (cuMemcpyDtoDAsync, 3020) X (cuMemsetD8Async, 3020) X (cuMemsetD8, 3020)             \
  X (cuStreamCreate, 2000) X (cuStreamDestroy, 4000) X (cuStreamSynchronize, 2000)       \
  X (cuStreamWaitEvent, 3020) X (cuEventCreate, 2000) X (cuEventRecord, 2000)            \
  X (cuEventDestroy, 4000) X (cuStreamBeginCapture, 10010) X (cuStreamEndCapture, 10000) \
  X (cuGraphInstantiateWithFlags, 11040) X (cuGraphLaunch, 10000)                        \
  X (cuGraphExecDestroy, 10000) X (cuGraphDestroy, 10000)

/* Entry points that may be missing (NULL then): cuFuncGetParamInfo came
 * with CUDA 12.4. */
#define PS__CU_OPTIONAL(X) \
  X (cuGetErrorName, 6000) X (cuGetErrorString, 6000) X (cuFuncGetParamInfo, 12040)

#define PS__CU_FIELD(name, version) PFN_##name##_v##version name;
#define PS__FIELD(name) __typeof__ (&name) name;

typedef struct ps__cuda {
  void *lib;
  int driver_version;
  PS__CU_FUNCS (PS__CU_FIELD)
  PS__CU_OPTIONAL (PS__CU_FIELD)
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
  X (cuptiGetGraphNodeId) X (cuptiGetVersion)

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
/* Where NVRTC (PS__LIB_NVRTC) or CUPTI (PS__LIB_CUPTI) is looked for, one
 * path a line into buf; returns how many. */
enum { PS__LIB_NVRTC, PS__LIB_CUPTI };
#define PS__MAX_CANDS_TEXT (24 * 1100)
size_t ps__lib_candidates (int which, char *buf, size_t cap);


/* Sets err for a failed driver call: "WHAT failed: NAME (text)". */
int ps__cu_fail (ps_gpu_error *err, ps_gpu_status status, CUresult r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__ ((format (printf, 4, 5)))
#endif
    ;
int ps__cupti_fail (ps_gpu_error *err, const ps__cupti *cp, CUptiResult r, const char *what);

#endif
