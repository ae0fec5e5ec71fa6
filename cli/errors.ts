/**
 * Error codes of cli/ subfolders, gathered so that cli/errors-doc.test.ts (which reads one
 * errors.ts per top-level folder) sees them: the demo (cli/demo/errors.ts), advise
 * (cli/advise/errors.ts) and compare (cli/compare/errors.ts). `WW_ERR_USAGE` (cli/usage-error.ts) is listed by the test itself.
 */
export { DEMO_ERROR_CODES } from './demo/errors.ts';
export { ADVISE_ERROR_CODES } from './advise/errors.ts';
export { COMPARE_ERROR_CODES } from './compare/errors.ts';
