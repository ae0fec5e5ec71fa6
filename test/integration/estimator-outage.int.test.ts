// A broker SIGKILLed for 20 s under 10 streams: every window exact (estimator-outage-cases.ts).
// Part of the Kafka 3.9 compatibility subset (docs/stack.md); the operator's wider shape and the
// outlier frame are in estimator-outage-wide.int.test.ts.
import { describeEstimatorOutage } from './estimator-outage-cases.ts';

describeEstimatorOutage(29692, ['narrow'], false);
