import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * What the estimator keeps per live stream, counted in a V8 heap snapshot (object counts, not
 * timings or RSS, so the result does not depend on the machine's load). A child process builds
 * an engine with STREAMS streams from real encoded frames (a GPU's UUID, a device model name
 * and a job name long enough that appending them char by char made ropes, collector host and
 * labels as Kafka headers), writes a heap snapshot and counts string nodes. Before the fix
 * (decoder appending char by char, no identity pool) this counted 43 concatenated-string nodes
 * per stream (its device UUID alone a rope of ~20, ~500 bytes); now ~2.6 (the stream key and
 * name, each a template literal), and one copy of each repeated device, host and label string.
 */
const STREAMS = 2_000;
const UUID = '5a8c2f3e-0b1d-4e6f-8a9b-c0d1e2f3a4b5';
const DEVICE = 'NVIDIA H100 80GB HBM3';
const HOST = 'gpu-node-0007.example';
const POD = 'trainer-pod-0000042';

const child = `
import v8 from 'node:v8';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const root = ${JSON.stringify(fileURLToPath(new URL('../..', import.meta.url)))};
const { encodeFrame } = await import(root + 'protocol/index.ts');
const { createEstimatorEngine } = await import(root + 'estimator/engine/estimator-engine.ts');
const { testEngineOptions, generateLaunches } = await import(root + 'estimator/testing/test-support.ts');
const base = generateLaunches({ streams: 1, launchesPerStream: 1, launchIntervalMillis: 1, startMillis: 1_700_000_000_000, groups: 8, groupSize: 32, seed: 3 })[0].frame;
const options = testEngineOptions({ window: { ...testEngineOptions().window, windowMillis: 600_000, idleCloseMillis: 600_000 } });
const noop = () => undefined;
const engine = createEstimatorEngine(options, { writePoints: noop, publishDistribution: noop, publishAlert: noop }, { frame: noop, windowClosed: noop, modelError: noop, alertRaised: noop });
const headers = { 'ww-host': ${JSON.stringify(HOST)}, 'ww-label-pod': ${JSON.stringify(POD)}, 'ww-label-namespace': 'ml' };
for (let s = 0; s < ${STREAMS}; s++) {
  const frame = { ...base, job: 'training-job-' + String(s).padStart(6, '0'), device: { ...base.device, name: ${JSON.stringify(DEVICE)}, uuid: ${JSON.stringify(UUID)} } };
  if (engine.handleMessage(0, String(s), encodeFrame(frame), 1_700_000_100_000, { ...headers }) !== 'recorded') throw new Error('not recorded');
}
globalThis.keep = engine;
const file = join(tmpdir(), 'ww-stream-memory-' + process.pid + '.heapsnapshot');
v8.writeHeapSnapshot(file);
const snapshot = JSON.parse(readFileSync(file, 'utf8'));
rmSync(file);
const fields = snapshot.snapshot.meta.node_fields, types = snapshot.snapshot.meta.node_types[0];
const [type, name] = [fields.indexOf('type'), fields.indexOf('name')];
const counts = { liveStreams: engine.liveStreams(), concatenated: 0, uuid: 0, device: 0, host: 0, pod: 0 };
for (let i = 0; i < snapshot.nodes.length; i += fields.length) {
  const kind = types[snapshot.nodes[i + type]];
  if (kind === 'concatenated string') counts.concatenated++;
  if (kind !== 'string') continue;
  const text = snapshot.strings[snapshot.nodes[i + name]];
  if (text === ${JSON.stringify(UUID)}) counts.uuid++;
  else if (text === ${JSON.stringify(DEVICE)}) counts.device++;
  else if (text === ${JSON.stringify(HOST)}) counts.host++;
  else if (text === ${JSON.stringify(POD)}) counts.pod++;
}
console.log(JSON.stringify(counts));
`;

describe('estimator memory per live stream (heap snapshot counts)', () => {
  it(`keeps no string ropes and one copy of each repeated device, host and label string for ${STREAMS} streams`, () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', child], { encoding: 'utf8', timeout: 120_000 });
    expect(run.stderr).toBe('');
    const counts = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as Record<string, number>;
    expect(counts.liveStreams).toBe(STREAMS);
    // A rope in any decoded name or UUID adds ≥ 7 per stream.
    expect(counts.concatenated).toBeLessThan(4 * STREAMS);
    // Shared through the engine's identity pool (without it: one flat copy per stream); this
    // script's own text holds one more.
    for (const key of ['uuid', 'device', 'host', 'pod']) expect(counts[key], key).toBeLessThanOrEqual(4);
  }, 120_000);
});
