import { connect } from 'node:net';
import { createKafkaClient, Secret } from '../../service/index.ts';
import { DeployError } from '../errors.ts';
import { isProcessRunning, sleep, tailFile } from './process-control.ts';

/** Result of one readiness probe: ready with a short description, or not with the reason. */
export type ProbeResult = { readonly ready: true; readonly detail: string } | { readonly ready: false; readonly reason: string };

/** A SCRAM login for {@link probeKafka}. */
export interface ProbeSasl {
  readonly mechanism: 'scram-sha-256' | 'scram-sha-512';
  readonly username: string;
  readonly password: string;
}

/**
 * Asks a Kafka cluster for its metadata (kafkajs admin `describeCluster`), once, without retries;
 * with `sasl`, after logging in with SCRAM (the local node's SASL listener).
 *
 * @param brokers - bootstrap list, e.g. ['127.0.0.1:19092'].
 * @param timeoutMillis - connection and request timeout.
 * @returns ready with 'cluster <id>, <k> broker(s)', or the reason it is not.
 * @example await probeKafka(['127.0.0.1:19092'], 2_000);
 * @example await probeKafka(['127.0.0.1:19094'], 3_000, { mechanism: 'scram-sha-512', username: 'warpwatch', password });
 */
export async function probeKafka(brokers: readonly string[], timeoutMillis = 2_000, sasl?: ProbeSasl): Promise<ProbeResult> {
  // A plain TCP connect first, destroyed on timeout: a kafkajs connection to a port whose
  // listener does not accept stays half-open (SYN_SENT) for minutes and keeps the process alive.
  const tcpProblems: string[] = [];
  for (const broker of brokers) {
    const problem = await tcpConnectProblem(broker, timeoutMillis);
    if (problem === undefined) break;
    tcpProblems.push(problem);
  }
  if (tcpProblems.length === brokers.length) return { ready: false, reason: tcpProblems.join('; ') };
  const kafka = createKafkaClient({
    clientId: 'warpwatch-stack-probe',
    brokers,
    connectionTimeoutMillis: timeoutMillis,
    requestTimeoutMillis: timeoutMillis,
    retry: { retries: 0 },
    security: { sasl: sasl === undefined ? undefined : { mechanism: sasl.mechanism, username: sasl.username, password: new Secret(sasl.password) }, tls: undefined },
  });
  const admin = kafka.admin();
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    const login = sasl === undefined ? '' : `SASL ${sasl.mechanism} as ${sasl.username}: `;
    return { ready: true, detail: `${login}cluster ${cluster.clusterId}, ${cluster.brokers.length} broker(s), controller ${cluster.controller}` };
  } catch (error) {
    return { ready: false, reason: error instanceof Error ? error.message : String(error) };
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/** Connects to `host:port` and disconnects; returns why that failed, or undefined when it worked. */
function tcpConnectProblem(hostPort: string, timeoutMillis: number): Promise<string | undefined> {
  const separator = hostPort.lastIndexOf(':');
  const host = hostPort.slice(0, separator).replace(/^\[|\]$/g, '');
  const port = Number(hostPort.slice(separator + 1));
  return new Promise((resolveProblem) => {
    const socket = connect({ host, port });
    const finish = (problem: string | undefined): void => {
      socket.destroy();
      resolveProblem(problem);
    };
    socket.setTimeout(timeoutMillis, () => finish(`TCP connect to ${hostPort} timed out after ${timeoutMillis} ms`));
    socket.once('connect', () => finish(undefined));
    socket.once('error', (error) => finish(`TCP connect to ${hostPort}: ${error.message}`));
  });
}

/**
 * Waits until the cluster's group coordinator answers (the first FindCoordinator request
 * creates `__consumer_offsets`), so the first consumer group of a test does not log
 * "group coordinator is not available" and retry.
 *
 * @throws the kafkajs error when the coordinator is still unavailable after its retries (~10 s).
 * @example await warmUpKafkaGroupCoordinator(['127.0.0.1:19092']);
 */
export async function warmUpKafkaGroupCoordinator(brokers: readonly string[]): Promise<void> {
  const kafka = createKafkaClient({ clientId: 'warpwatch-stack-probe', brokers, retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 1_000 } });
  const admin = kafka.admin();
  try {
    await admin.connect();
    await admin.describeGroups(['warpwatch-stack-warm-up']);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/**
 * Asks an InfluxDB for `/ping` (1.x and 2.x answer 204), once.
 *
 * @param url - base URL, e.g. 'http://127.0.0.1:18086'.
 * @returns ready with 'InfluxDB <version>', or the reason it is not.
 * @example await probeInflux('http://127.0.0.1:18086');
 */
export async function probeInflux(url: string, timeoutMillis = 2_000): Promise<ProbeResult> {
  try {
    const response = await fetch(`${url}/ping`, { signal: AbortSignal.timeout(timeoutMillis) });
    await response.arrayBuffer();
    if (response.status !== 204 && response.status !== 200) return { ready: false, reason: `GET /ping answered HTTP ${response.status}, expected 204` };
    return { ready: true, detail: `InfluxDB ${response.headers.get('x-influxdb-version') ?? 'unknown version'}` };
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return { ready: false, reason: `${error instanceof Error ? error.message : String(error)}${cause}` };
  }
}

/** What {@link waitUntilReady} watches. */
export interface ReadinessWait {
  /** Name for messages, e.g. 'kafka'. */
  readonly name: string;
  readonly probe: () => Promise<ProbeResult>;
  /** The server process; when it exits, waiting stops at once. */
  readonly pid?: number;
  readonly commandLineMarker?: string;
  /** Log shown (last lines) when the server dies or never answers. */
  readonly logFile: string;
  readonly timeoutMillis: number;
  /** Pause between probes. */
  readonly intervalMillis?: number;
}

/**
 * Probes until the server answers, its process exits, or the time is up.
 *
 * @returns the detail of the successful probe.
 * @throws DeployError WW_ERR_STACK_START when the process exits first,
 *   WW_ERR_STACK_NOT_READY when it does not answer within `timeoutMillis` (both quote the log tail).
 * @example await waitUntilReady({ name: 'influxdb', probe: () => probeInflux(url), logFile, timeoutMillis: 60_000 });
 */
export async function waitUntilReady(wait: ReadinessWait): Promise<string> {
  const deadline = Date.now() + wait.timeoutMillis;
  let last: ProbeResult = { ready: false, reason: 'not probed yet' };
  for (;;) {
    last = await wait.probe();
    if (last.ready) return last.detail;
    if (wait.pid !== undefined && !isProcessRunning(wait.pid, wait.commandLineMarker)) {
      throw new DeployError('WW_ERR_STACK_START', `${wait.name} (pid ${wait.pid}) exited during start-up; log ${wait.logFile}, last lines:\n${tailFile(wait.logFile, 25)}`, { retriable: true });
    }
    if (Date.now() >= deadline) break;
    await sleep(wait.intervalMillis ?? 250);
  }
  throw new DeployError(
    'WW_ERR_STACK_NOT_READY',
    `${wait.name} did not answer within ${wait.timeoutMillis} ms (last probe: ${last.ready ? 'ready' : last.reason}); log ${wait.logFile}, last lines:\n${tailFile(wait.logFile, 25)}`,
    { retriable: true },
  );
}
