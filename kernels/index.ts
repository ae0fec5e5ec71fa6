// Public API of kernels/ (TS side): build the C++/CUDA workload programs and run them (the one place a workload is spawned).
export { DEFAULT_CUDA_TOOLKIT_DIR, DEFAULT_KERNELS_BUILD_DIR, DEFAULT_WORKLOADS_BUILD_DIR, ensureKernelsBuilt, type KernelsBuild, type KernelsBuildOptions } from './build.ts';
export {
  BACKEND_NAMES,
  CPU_WORKLOAD_TARGETS,
  WORKLOAD_NAMES,
  WorkloadError,
  runWorkload,
  streamWorkloadFrames,
  workloadBinaryName,
  type BackendName,
  type WorkloadName,
  type WorkloadReport,
} from './run-workload.ts';
export { KERNELS_ERROR_CODES, KernelsError, type KernelsErrorCode } from './errors.ts';
