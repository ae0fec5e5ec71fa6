/**
 * Errors of python/ (the Python producer, docs/python.md). They are raised or printed by the
 * Python package (one line starting with the code); this table is the TS side's record of them,
 * so docs/errors.md stays in sync (test/policy/errors-doc.test.ts) and python/python.test.ts checks that
 * the Python sources use no other code.
 */

/** Every code the Python package uses; docs/errors.md lists each one (a test keeps them in sync). */
export const PYTHON_ERROR_CODES = [
  // NVRTC or the CUDA headers are missing (the [nvrtc] extra): python/warpwatch/nvrtc_check.py.
  'WW_ERR_PYTHON_NVRTC',
  // Per-lane counts that are not a whole number of groups, negative, above 2^32-1, or too many in total: python/warpwatch/counts.py.
  'WW_ERR_PYTHON_COUNTS',
  // A group size or block shape the Numba reduction cannot serve: python/warpwatch/numba_support.py.
  'WW_ERR_PYTHON_GROUP_SIZE',
  // A non-contiguous array given to the Triton interpreter wrapper: python/warpwatch/triton_support.py.
  'WW_ERR_PYTHON_ARRAY',
  // Bad ProbeReadback options, or an unknown selection given to probe_buffers_value: python/warpwatch/probe_readback.py, probe_buffers.py.
  'WW_ERR_PYTHON_READBACK',
  // Bad arguments to an example, or device totals that disagree with the host's: python/warpwatch/examples/.
  'WW_ERR_PYTHON_EXAMPLE',
  // An unknown command or example given to `warpwatch-py`: python/warpwatch/__main__.py.
  'WW_ERR_PYTHON_USAGE',
] as const;

/** A stable Python-package error code, one of {@link PYTHON_ERROR_CODES}. */
export type PythonErrorCode = (typeof PYTHON_ERROR_CODES)[number];
