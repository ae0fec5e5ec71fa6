/**
 * Error codes of cli/ subfolders, gathered so that test/policy/errors-doc.test.ts (which reads one
 * errors.ts per top-level folder) sees them: the demo (cli/demo/errors.ts), advise
 * (cli/advise/errors.ts), compare (cli/compare/errors.ts) and the frame-file readers
 * (cli/frame-file.ts). `WW_ERR_USAGE` (cli/usage-error.ts) is listed by the test itself.
 */
export { DEMO_ERROR_CODES } from './demo/errors.ts';
export { ADVISE_ERROR_CODES } from './advise/errors.ts';
export { COMPARE_ERROR_CODES } from './compare/errors.ts';
export { FRAME_FILE_ERROR_CODES } from './frame-file.ts';
