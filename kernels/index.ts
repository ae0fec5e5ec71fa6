// Public API of kernels/ (TS side): build the C++/CUDA workload programs and run them (the one place a workload is spawned).
// It exports what other folders use; build directories and the error codes stay inside kernels/.
export { ensureKernelsBuilt } from './build.ts';
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
export { KernelsError } from './errors.ts';
