// A broker SIGKILLed for 20 s under 100 streams with idle close = the window (the operator's run
// of docs/estimator.md § Fencing), and a frame dated 240 s ahead of its stream
// (estimator-outage-cases.ts). The narrow shape is in estimator-outage.int.test.ts.
import { describeEstimatorOutage } from './estimator-outage-cases.ts';

describeEstimatorOutage(29592, ['wide'], true);
