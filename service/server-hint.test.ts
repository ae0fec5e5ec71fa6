// What to try when a server does not answer, and the once-per-outage log.
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { COLLECTOR_FIELDS, ESTIMATOR_FIELDS } from '../contracts/index.ts';
import { createOutageLog } from './outage-log.ts';
import { isUnreachableError, LOCAL_STACK_ADDRESSES, unreachableServerHint } from './server-hint.ts';
import { closedPort } from './testing/test-support.ts';


describe('unreachableServerHint', () => {
  it('the local stack when the default address is used, else the variable (and flag) that set it', () => {
    expect(unreachableServerHint('kafka', LOCAL_STACK_ADDRESSES.kafkaBrokers)).toBe(
      'is the local stack running? start it with `npm run stack -- up` (or point WARPWATCH_KAFKA_BROKERS at a running Kafka)',
    );
    expect(unreachableServerHint('influx', `${LOCAL_STACK_ADDRESSES.influxUrl}/`, '--influx-url')).toBe(
      'is the local stack running? start it with `npm run stack -- up` (or point WARPWATCH_INFLUX_URL at a running InfluxDB)',
    );
    expect(unreachableServerHint('kafka', 'kafka-1:9092,kafka-2:9092', '--brokers')).toBe('check WARPWATCH_KAFKA_BROKERS (or --brokers): nothing answers at kafka-1:9092,kafka-2:9092');
    expect(unreachableServerHint('influx', 'http://influx:8086')).toBe('check WARPWATCH_INFLUX_URL: nothing answers at http://influx:8086');
  });

  it('the local stack addresses are the services\' defaults (so an unset variable gets the stack hint)', () => {
    expect(LOCAL_STACK_ADDRESSES).toEqual({ kafkaBrokers: '127.0.0.1:19092', influxUrl: 'http://127.0.0.1:18086' });
    expect(ESTIMATOR_FIELDS.brokers.default.join(',')).toBe(LOCAL_STACK_ADDRESSES.kafkaBrokers);
    expect(COLLECTOR_FIELDS.brokers.default.join(',')).toBe(LOCAL_STACK_ADDRESSES.kafkaBrokers);
    expect(ESTIMATOR_FIELDS.influxUrl.default).toBe(LOCAL_STACK_ADDRESSES.influxUrl);
  });
});

describe('isUnreachableError', () => {
  it('recognises a refused connection to a real closed port, also wrapped in a cause', async () => {
    const port = await closedPort();
    const refused = await new Promise<Error>((resolve) => connect({ host: '127.0.0.1', port }).once('error', resolve));
    expect(isUnreachableError(refused)).toBe(true);
    expect(isUnreachableError(new Error('could not deliver 4 record(s)', { cause: refused }))).toBe(true);
  });

  it('does not take a refused request for a missing server', () => {
    expect(isUnreachableError(new Error('SASL authentication failed: invalid credentials'))).toBe(false);
    expect(isUnreachableError(new Error('HTTP 400: unable to parse line'))).toBe(false);
    expect(isUnreachableError(undefined)).toBe(false);
  });
});

describe('createOutageLog', () => {
  it('logs the first failure of a streak and the recovery, nothing in between', () => {
    const lines: string[] = [];
    const outage = createOutageLog((line) => lines.push(line));
    outage.recovered('up'); // no outage yet: nothing to say
    for (let i = 0; i < 5; i++) outage.failed(`down ${i}`);
    expect(outage.down).toBe(true);
    outage.recovered('up again');
    outage.failed('down again');
    expect(lines).toEqual(['down 0', 'up again', 'down again']);
  });
});
