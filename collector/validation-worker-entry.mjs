// Entry of the validation worker thread: the worker starts without the parent's TypeScript
// loader, so register tsx here, then load the TypeScript worker body named by workerData.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.module);
