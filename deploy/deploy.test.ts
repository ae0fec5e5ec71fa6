// Contract checks of the deployment files that cannot run here (no container engine, no
// cluster): compose.yaml, k8s/, grafana/ and the Dockerfile are parsed and compared with
// the code they deploy — env names and values against the config field definitions, ports, topics, datasource uid,
// commands — and every file they reference must exist.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { COLLECTOR_FIELDS, ESTIMATOR_FIELDS, TOPICS, type ConfigFields } from '../contracts/index.ts';
import { ConfigReader, formatConfigProblem } from '../service/index.ts';
import { GRAFANA_DASHBOARDS_MOUNT, INFLUXQL_DATASOURCE_UID } from '../dashboards/index.ts';
import { COLLECTOR_SOCKET_DIRECTORY, CONTAINER_PORTS, ESTIMATOR_NODE_FLAGS, IMAGE_ENTRYPOINT, IMAGE_PROCESS_ENV, INFLUX_RETENTION, GRAFANA_DASHBOARDS_PATH, GRAFANA_DATASOURCE_UID, SERVICE_COMMANDS, SERVICE_CONFIG_FIELDS, SERVICE_CONFIG_MODULES, serviceEnvNames } from './contracts.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const deployDirectory = join(root, 'deploy');
type Service = keyof typeof SERVICE_CONFIG_MODULES;
const SERVICES: readonly Service[] = ['collector', 'estimator'];

type Yaml = Record<string, unknown>;
const asRecord = (value: unknown): Yaml => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Yaml) : {});
const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** `WARPWATCH_*` names a service reads: its configuration field definitions (contracts/config-fields.ts). */
function envNamesReadBy(service: Service): Set<string> {
  return new Set(serviceEnvNames(service));
}

/**
 * Problems the service's config reader finds in literal deployment values (a value with a
 * `${...}` interpolation is checked with its default; credentials and files are not read here).
 */
function valueProblems(service: Service, env: Readonly<Record<string, string>>): string[] {
  const problems: string[] = [];
  for (const fields of SERVICE_CONFIG_FIELDS[service] as readonly ConfigFields[]) {
    for (const [key, field] of Object.entries(fields)) {
      const value = env[field.env];
      if (value === undefined || field.kind === 'secret' || field.kind === 'file' || field.kind === 'family') continue;
      const reader = new ConfigReader({ env: { [field.env]: withDefaults(value) } });
      reader.readField(key, field);
      problems.push(...reader.problems.map(formatConfigProblem));
    }
  }
  return problems;
}

// Compose applies YAML merge keys (`<<: *warpwatch-service`); YAML 1.2 parsers need them switched on.
const compose = asRecord(parse(readFileSync(join(deployDirectory, 'compose.yaml'), 'utf8'), { merge: true }));
const composeServices = asRecord(compose['services']);
const composeService = (name: string): Yaml => asRecord(composeServices[name]);
const composeEnv = (name: string): Record<string, string> =>
  Object.fromEntries(Object.entries(asRecord(composeService(name)['environment'])).map(([k, v]) => [k, String(v)]));
/** `${VAR:-default}` → default, as compose interpolates with the variable unset. */
const withDefaults = (text: string): string => text.replace(/\$\{[A-Z0-9_]+:-([^}]*)\}/g, '$1');
/** Compose's top-level `secrets:`: name → the host file it is read from (relative to deploy/). */
const composeSecrets = (): Record<string, string> =>
  Object.fromEntries(Object.entries(asRecord(compose['secrets'])).map(([name, secret]) => [name, String(asRecord(secret)['file'])]));
/** The secrets a compose service lists (short syntax): the path it sees (/run/secrets/<name>) → name. */
const composeSecretPaths = (name: string): Map<string, string> =>
  new Map(asArray(composeService(name)['secrets']).map((secret) => [`/run/secrets/${String(secret)}`, String(secret)]));
/** The files the InfluxQL datasource provisioning reads (`$__file{path}`), in order. */
const datasourceFiles = (): string[] =>
  [...readFileSync(join(deployDirectory, 'grafana', 'datasources', 'warpwatch-influxql.yaml'), 'utf8').matchAll(/\$__file\{([^}]+)\}/g)].map((m) => String(m[1]));
/** Short volume syntax `source:target[:mode]` of a compose service, interpolated with defaults. */
const composeVolumes = (name: string): { source: string; target: string }[] =>
  asArray(composeService(name)['volumes']).map((volume) => {
    const [source = '', target = ''] = withDefaults(String(volume)).split(':');
    return { source, target };
  });

const k8sDirectory = join(deployDirectory, 'k8s');
const kustomization = asRecord(parse(readFileSync(join(k8sDirectory, 'kustomization.yaml'), 'utf8')));
const k8sObjects: Yaml[] = asArray(kustomization['resources']).flatMap((file) =>
  parseAllDocuments(readFileSync(join(k8sDirectory, String(file)), 'utf8')).map((document) => asRecord(document.toJS())),
);
const k8sObject = (kind: string, name: string): Yaml => {
  const found = k8sObjects.find((o) => o['kind'] === kind && asRecord(o['metadata'])['name'] === name);
  if (found === undefined) throw new Error(`deploy/k8s has no ${kind} ${name}`);
  return found;
};
const podSpec = (workload: Yaml): Yaml => asRecord(asRecord(asRecord(workload['spec'])['template'])['spec']);
const firstContainer = (workload: Yaml): Yaml => asRecord(asArray(podSpec(workload)['containers'])[0]);
const configMapData = (): Record<string, string> => asRecord(k8sObject('ConfigMap', 'warpwatch-config')['data']) as Record<string, string>;
const K8S_WORKLOADS: Record<Service, { kind: string; name: string }> = {
  collector: { kind: 'DaemonSet', name: 'warpwatch-collector' },
  estimator: { kind: 'Deployment', name: 'warpwatch-estimator' },
};
/** Env of a k8s container: explicit `env` entries (value or reference) plus ConfigMap keys from envFrom. */
function k8sEnv(workload: Yaml): Map<string, Yaml> {
  const container = firstContainer(workload);
  const env = new Map<string, Yaml>();
  for (const source of asArray(container['envFrom'])) {
    const name = asRecord(asRecord(source)['configMapRef'])['name'];
    const map = k8sObjects.find((o) => o['kind'] === 'ConfigMap' && asRecord(o['metadata'])['name'] === name);
    for (const [key, value] of Object.entries(asRecord(map?.['data']))) env.set(key, { value });
  }
  for (const entry of asArray(container['env'])) env.set(String(asRecord(entry)['name']), asRecord(entry));
  return env;
}

describe('deploy contracts', () => {
  describe('contracts.ts', () => {
    it('matches the ports, datasource uid and dashboards path the code uses', () => {
      expect(CONTAINER_PORTS.collectorMetrics).toBe(COLLECTOR_FIELDS.metricsPort.default);
      expect(CONTAINER_PORTS.estimatorMetrics).toBe(ESTIMATOR_FIELDS.metricsPort.default);
      expect(GRAFANA_DATASOURCE_UID).toBe(INFLUXQL_DATASOURCE_UID);
      const provider = asRecord(parse(readFileSync(join(deployDirectory, 'grafana', 'dashboards', 'warpwatch-dashboards.yaml'), 'utf8')));
      expect(asRecord(asRecord(asArray(provider['providers'])[0])['options'])['path']).toBe(GRAFANA_DASHBOARDS_PATH);
    });

    it('checks deployment values with the services\' own field definitions', () => {
      expect(serviceEnvNames('collector')).toEqual(expect.arrayContaining(['WARPWATCH_SOCKET', 'WARPWATCH_LABEL_', 'WARPWATCH_INFLUX_TOKEN_FILE', 'WARPWATCH_KAFKA_SASL_PASSWORD_FILE']));
      expect(serviceEnvNames('estimator')).toEqual(expect.arrayContaining(['WARPWATCH_ESTIMATOR_GROUP_ID', 'WARPWATCH_KAFKA_TLS_CA_FILE']));
      expect(serviceEnvNames('estimator')).not.toContain('WARPWATCH_SOCKET');
      // The value check can fail: a bad value, also one behind a compose default.
      expect(valueProblems('collector', { WARPWATCH_SOCKET_MODE: '999', WARPWATCH_KAFKA_PARTITIONS: '${PARTS:-0}', WARPWATCH_HOST: 'any' })).toEqual([
        'WARPWATCH_SOCKET_MODE must be octal permission bits like 0660, got "999"',
        'WARPWATCH_KAFKA_PARTITIONS must be an integer 1..10000, got "0"',
      ]);
    });

    it('names commands that the CLI registers', () => {
      const main = readFileSync(join(root, 'cli', 'main.ts'), 'utf8');
      for (const command of Object.values(SERVICE_COMMANDS)) {
        expect(existsSync(join(root, 'cli', 'commands', `${command}.ts`)), `cli/commands/${command}.ts`).toBe(true);
        expect(main).toContain(`./commands/${command}.ts`);
      }
    });
  });

  describe('compose.yaml', () => {
    it('runs Kafka 3.9, InfluxDB 2.x, Grafana, Prometheus, Alertmanager, collector and estimator, each with a health check', () => {
      expect(Object.keys(composeServices).sort()).toEqual(['alertmanager', 'collector', 'estimator', 'grafana', 'influxdb', 'kafka', 'prometheus']);
      expect(composeService('kafka')['image']).toMatch(/^apache\/kafka:3\.9\.\d+$/);
      expect(composeService('influxdb')['image']).toMatch(/^influxdb:2\.\d+/);
      for (const name of Object.keys(composeServices)) expect(asRecord(composeService(name)['healthcheck'])['test'], name).toBeDefined();
    });

    it('keeps state in declared named volumes and bind-mounts only files that exist', () => {
      const declared = Object.keys(asRecord(compose['volumes']));
      for (const name of Object.keys(composeServices)) {
        for (const { source } of composeVolumes(name)) {
          if (source.startsWith('.')) expect(existsSync(resolve(deployDirectory, source)), `${name}: ${source}`).toBe(true);
          else if (!source.startsWith('/')) expect(declared, `${name}: volume ${source}`).toContain(source);
        }
      }
      for (const name of ['kafka', 'influxdb', 'grafana']) {
        expect(composeVolumes(name).some((v) => declared.includes(v.source)), name).toBe(true);
      }
    });

    it('builds collector and estimator from the Dockerfile, whose COPY sources exist', () => {
      for (const service of SERVICES) {
        const build = asRecord(composeService(service)['build']);
        const context = resolve(deployDirectory, String(build['context']));
        const dockerfile = join(context, String(build['dockerfile']));
        expect(existsSync(dockerfile), dockerfile).toBe(true);
        expect(composeService(service)['command']).toEqual([SERVICE_COMMANDS[service]]);
        // The image's entrypoint; the estimator's adds its Node flags between node and the CLI.
        const dockerText = readFileSync(dockerfile, 'utf8');
        for (const [name, value] of Object.entries(IMAGE_PROCESS_ENV)) expect(dockerText, `Dockerfile ENV ${name}`).toMatch(new RegExp(`^ENV ${name}=${value}$`, 'm'));
        const entrypoint = /^ENTRYPOINT (\[.*\])$/m.exec(dockerText)?.[1];
        expect(JSON.parse(entrypoint ?? 'null')).toEqual(IMAGE_ENTRYPOINT);
        const [node, ...cli] = IMAGE_ENTRYPOINT;
        if (service === 'estimator') expect(composeService(service)['entrypoint']).toEqual([node, ...ESTIMATOR_NODE_FLAGS, ...cli]);
        else expect(composeService(service)['entrypoint']).toBeUndefined();
        for (const line of readFileSync(dockerfile, 'utf8').split('\n')) {
          const copy = /^COPY (?!--from)(.+) \S+$/.exec(line.trim());
          for (const source of copy?.[1]?.split(/\s+/) ?? []) expect(existsSync(join(context, source)), `Dockerfile COPY ${source}`).toBe(true);
        }
      }
    });

    it('gives the services only environment variables their config fields define, with values those fields accept', () => {
      for (const service of SERVICES) {
        const known = envNamesReadBy(service);
        for (const name of Object.keys(composeEnv(service))) expect(known, `${service}: ${name}`).toContain(name);
        expect(valueProblems(service, composeEnv(service)), service).toEqual([]);
      }
    });

    it('wires brokers, InfluxDB URL, bucket and metrics ports consistently', () => {
      const kafkaEnv = composeEnv('kafka');
      expect(kafkaEnv['KAFKA_ADVERTISED_LISTENERS']).toContain(`INTERNAL://kafka:${CONTAINER_PORTS.kafka}`);
      expect(String(kafkaEnv['KAFKA_CONTROLLER_QUORUM_VOTERS'])).toMatch(/^1@kafka:\d+$/);
      // KRaft cluster ids are 16 bytes in base64url: 22 characters.
      expect(Buffer.from(String(kafkaEnv['CLUSTER_ID']), 'base64url')).toHaveLength(16);
      const influxEnv = composeEnv('influxdb');
      const grafanaEnv = composeEnv('grafana');
      for (const service of SERVICES) {
        const env = composeEnv(service);
        expect(env['WARPWATCH_KAFKA_BROKERS']).toBe(`kafka:${CONTAINER_PORTS.kafka}`);
        const port = service === 'collector' ? CONTAINER_PORTS.collectorMetrics : CONTAINER_PORTS.estimatorMetrics;
        expect(Number(env['WARPWATCH_METRICS_PORT'])).toBe(port);
        expect(env['WARPWATCH_METRICS_HOST']).toBe('0.0.0.0');
        expect(JSON.stringify(asRecord(composeService(service)['healthcheck'])['test'])).toContain(`:${port}/healthz`);
      }
      const estimator = composeEnv('estimator');
      expect(estimator['WARPWATCH_INFLUX_URL']).toBe(`http://influxdb:${CONTAINER_PORTS.influxdb}`);
      expect(grafanaEnv['WARPWATCH_INFLUX_URL']).toBe(estimator['WARPWATCH_INFLUX_URL']);
      // The estimator writes to bucket "<database>/<retention policy>" (estimator/config.ts).
      expect(influxEnv['DOCKER_INFLUXDB_INIT_BUCKET']).toBe(`${estimator['WARPWATCH_INFLUX_DATABASE']}/${estimator['WARPWATCH_INFLUX_RETENTION_POLICY']}`);
      expect(influxEnv['DOCKER_INFLUXDB_INIT_ORG']).toBe(estimator['WARPWATCH_INFLUX_ORG']);
      // One token, one file: InfluxDB's set-up, both services and Grafana's datasource read the secret influx-token.
      const tokenFile = '/run/secrets/influx-token';
      expect(composeSecrets()['influx-token']).toBe('./secrets/influx-token');
      expect(influxEnv['DOCKER_INFLUXDB_INIT_ADMIN_TOKEN_FILE']).toBe(tokenFile);
      expect(estimator['WARPWATCH_INFLUX_TOKEN_FILE']).toBe(tokenFile);
      expect(datasourceFiles()).toEqual([tokenFile]);
      for (const service of ['influxdb', 'grafana', ...SERVICES]) expect(composeSecretPaths(service).get(tokenFile), `${service} mounts influx-token`).toBe('influx-token');
      expect(grafanaEnv['GF_SECURITY_ADMIN_PASSWORD__FILE']).toBe('/run/secrets/grafana-admin-password');
      expect(influxEnv['DOCKER_INFLUXDB_INIT_PASSWORD_FILE']).toBe('/run/secrets/influx-password');
      // The collector writes its warpwatch_pipeline points to the same InfluxDB bucket.
      const collector = composeEnv('collector');
      for (const name of ['WARPWATCH_INFLUX_URL', 'WARPWATCH_INFLUX_ORG', 'WARPWATCH_INFLUX_DATABASE', 'WARPWATCH_INFLUX_RETENTION_POLICY', 'WARPWATCH_INFLUX_TOKEN_FILE']) {
        expect(collector[name], `collector ${name}`).toBe(estimator[name]);
      }
    });

    it('passes no token or password as an environment value: each is a file of a declared secret the service mounts', () => {
      const declared = composeSecrets();
      for (const name of Object.keys(composeServices)) {
        const mounted = composeSecretPaths(name);
        for (const [key, value] of Object.entries(composeEnv(name))) {
          if (!/TOKEN|PASSWORD|SECRET|TLS_KEY/.test(key)) continue;
          expect(key, `${name}: ${key} holds a secret value`).toMatch(/_FILE$/);
          expect(mounted.get(value), `${name}: ${key}=${value} is not a secret this service mounts`).toBeDefined();
        }
        for (const secret of mounted.values()) expect(Object.keys(declared), `${name}: ${secret}`).toContain(secret);
      }
      // No dev defaults left to interpolate (`${WARPWATCH_INFLUX_TOKEN:-…}`).
      expect(readFileSync(join(deployDirectory, 'compose.yaml'), 'utf8')).not.toMatch(/\$\{[A-Z0-9_]*(TOKEN|PASSWORD)/);
      // Every secret is a file in deploy/secrets, which git ignores (all but its README).
      for (const [name, file] of Object.entries(declared)) expect(file, name).toBe(`./secrets/${name}`);
      const ignored = readFileSync(join(root, '.gitignore'), 'utf8').split('\n');
      expect(ignored).toEqual(expect.arrayContaining(['/deploy/secrets/*', '!/deploy/secrets/README.md']));
      expect(existsSync(join(deployDirectory, 'secrets', 'README.md'))).toBe(true);
      // Nor is it sent to the image build (compose builds with the repository root as context).
      expect(readFileSync(join(root, '.dockerignore'), 'utf8').split('\n')).toContain('deploy/secrets');
    });

    it('creates every compose secret with deploy/make-compose-secrets.sh: random, no newline, folder 0700, kept on a second run', () => {
      const folder = join(mkdtempSync(join(tmpdir(), 'ww-compose-secrets-')), 'secrets');
      try {
        const script = join(deployDirectory, 'make-compose-secrets.sh');
        const first = execFileSync('sh', [script, folder], { encoding: 'utf8' });
        expect(readdirSync(folder).sort()).toEqual(Object.keys(composeSecrets()).sort());
        expect(statSync(folder).mode & 0o777).toBe(0o700);
        const values = readdirSync(folder).map((file) => readFileSync(join(folder, file), 'utf8'));
        for (const value of values) expect(value).toMatch(/^[0-9a-f]{64}$/);
        expect(new Set(values).size).toBe(values.length);
        // Values are never printed, only paths.
        for (const value of values) expect(first).not.toContain(value);
        execFileSync('sh', [script, folder], { encoding: 'utf8' });
        expect(readdirSync(folder).map((file) => readFileSync(join(folder, file), 'utf8'))).toEqual(values);
      } finally {
        rmSync(dirname(folder), { recursive: true, force: true });
      }
    });

    it('mounts the collector socket folder where WARPWATCH_SOCKET points', () => {
      const socket = composeEnv('collector')['WARPWATCH_SOCKET'] ?? '';
      expect(posix.dirname(socket)).toBe(COLLECTOR_SOCKET_DIRECTORY);
      expect(composeVolumes('collector').map((v) => v.target)).toContain(COLLECTOR_SOCKET_DIRECTORY);
    });

    it('keeps points for the one documented retention default', () => {
      expect(composeEnv('influxdb')['DOCKER_INFLUXDB_INIT_RETENTION']).toBe(INFLUX_RETENTION);
      expect(readFileSync(join(root, 'docs', 'stack.md'), 'utf8')).toContain(`retention ${INFLUX_RETENTION}`);
    });

    it('gives the socket a dedicated host folder (never /tmp), mode 0660 and a group', () => {
      const mount = composeVolumes('collector').find((v) => v.target === COLLECTOR_SOCKET_DIRECTORY);
      expect(mount?.source).toBe('/run/warpwatch');
      expect(composeEnv('collector')['WARPWATCH_SOCKET_MODE']).toBe('0660');
      expect(withDefaults(String(composeService('collector')['user']))).toBe('1000:1000');
    });

    it('provisions Grafana with the datasource, dashboards and alert rules from deploy/grafana and dashboards/generated', () => {
      const mounts = new Map(composeVolumes('grafana').map((v) => [v.target, v.source]));
      expect(mounts.get('/etc/grafana/provisioning/datasources')).toBe('./grafana/datasources');
      expect(mounts.get('/etc/grafana/provisioning/dashboards')).toBe('./grafana/dashboards');
      expect(mounts.get('/etc/grafana/provisioning/alerting')).toBe('./grafana/alerting');
      const dashboardsSource = mounts.get(GRAFANA_DASHBOARDS_PATH);
      expect(dashboardsSource).toBeDefined();
      const dashboardFiles = readdirSync(resolve(deployDirectory, dashboardsSource ?? '')).filter((f) => f.endsWith('.json'));
      expect(dashboardFiles.length).toBeGreaterThan(0);
      // Every variable the datasource file interpolates is set in Grafana's environment, every file it reads is mounted.
      const datasourceText = readFileSync(join(deployDirectory, 'grafana', 'datasources', 'warpwatch-influxql.yaml'), 'utf8');
      for (const [, name] of datasourceText.matchAll(/\$\{([A-Z0-9_]+)\}/g)) expect(Object.keys(composeEnv('grafana')), String(name)).toContain(name);
      for (const file of datasourceFiles()) expect(composeSecretPaths('grafana').has(file), file).toBe(true);
    });
  });

  describe('grafana datasource', () => {
    it('provisions the InfluxQL datasource the alert rules reference; dashboards reference only their datasource variable', () => {
      const provisioning = asRecord(parse(readFileSync(join(deployDirectory, 'grafana', 'datasources', 'warpwatch-influxql.yaml'), 'utf8')));
      const datasources = asArray(provisioning['datasources']).map(asRecord);
      expect(datasources.map((d) => [d['uid'], d['type']])).toEqual([[GRAFANA_DATASOURCE_UID, 'influxdb']]);
      const generated = join(root, 'dashboards', 'generated', 'dashboards');
      const referenced = new Set<string>();
      for (const file of readdirSync(generated).filter((f) => f.endsWith('.json'))) {
        for (const [, uid] of readFileSync(join(generated, file), 'utf8').matchAll(/"type":\s*"(?:influxdb|prometheus)",\s*"uid":\s*"([^"]+)"/g)) referenced.add(String(uid));
      }
      expect([...referenced]).toEqual(['${datasource}']);
      const ruleUids = new Set<string>();
      for (const [, uid] of readFileSync(join(deployDirectory, 'grafana', 'alerting', 'warpwatch-alert-rules.yaml'), 'utf8').matchAll(/datasourceUid:\s*(\S+)/g)) {
        if (uid !== '__expr__') ruleUids.add(String(uid));
      }
      expect([...ruleUids]).toEqual([GRAFANA_DATASOURCE_UID]);
    });
  });

  describe('k8s', () => {
    it('provisions Grafana from the generated ConfigMaps: datasources equal to compose\'s, provider path, alert rules and every dashboard', () => {
      const docs = parseAllDocuments(readFileSync(join(k8sDirectory, 'grafana-provisioning.yaml'), 'utf8')).map((d) => asRecord(d.toJSON()));
      const data = (name: string): Record<string, unknown> => asRecord(docs.find((d) => asRecord(d['metadata'])['name'] === name)?.['data']);
      for (const file of ['warpwatch-influxql.yaml', 'warpwatch-prometheus.yaml']) {
        expect(parse(String(data('warpwatch-grafana-datasources')[file])), file).toEqual(parse(readFileSync(join(deployDirectory, 'grafana', 'datasources', file), 'utf8')));
      }
      expect(Object.keys(data('warpwatch-grafana-dashboards')).sort()).toEqual(readdirSync(join(root, 'dashboards', 'generated', 'dashboards')).sort());
      for (const [file, text] of Object.entries(data('warpwatch-grafana-dashboards'))) {
        expect(text, file).toBe(readFileSync(join(root, 'dashboards', 'generated', 'dashboards', file), 'utf8'));
      }
      expect(data('warpwatch-grafana-alerting')['warpwatch-alert-rules.yaml']).toBe(readFileSync(join(deployDirectory, 'grafana', 'alerting', 'warpwatch-alert-rules.yaml'), 'utf8'));
      const grafana = parseAllDocuments(readFileSync(join(k8sDirectory, 'grafana-deployment.yaml'), 'utf8')).map((d) => asRecord(d.toJSON()))[0] ?? {};
      const pod = asRecord(asRecord(asRecord(grafana['spec'])['template'])['spec']);
      const mounts = Object.fromEntries(asArray(firstContainer(grafana)['volumeMounts']).map((m) => [String(asRecord(m)['name']), String(asRecord(m)['mountPath'])]));
      const sources = Object.fromEntries(asArray(pod['volumes']).map((v) => [String(asRecord(v)['name']), String(asRecord(asRecord(v)['configMap'])['name'] ?? '')]));
      const mountedAt = (configMap: string): string | undefined => mounts[Object.keys(sources).find((k) => sources[k] === configMap) ?? ''];
      expect(mountedAt('warpwatch-grafana-datasources')).toBe('/etc/grafana/provisioning/datasources');
      expect(mountedAt('warpwatch-grafana-dashboard-provider')).toBe('/etc/grafana/provisioning/dashboards');
      expect(mountedAt('warpwatch-grafana-alerting')).toBe('/etc/grafana/provisioning/alerting');
      expect(mountedAt('warpwatch-grafana-dashboards')).toBe(GRAFANA_DASHBOARDS_MOUNT);
      const env = asArray(firstContainer(grafana)['env']).map((e) => String(asRecord(e)['name']));
      for (const name of ['WARPWATCH_INFLUX_URL', 'WARPWATCH_INFLUX_DATABASE', 'WARPWATCH_PROMETHEUS_URL']) expect(env).toContain(name);
      // Credentials as files of the Secret, at the paths compose uses: the datasource's $__file{…} and the admin password.
      const secretVolumes = asArray(pod['volumes']).map(asRecord).filter((v) => asRecord(v['secret'])['secretName'] === 'warpwatch-secrets').map((v) => v['name']);
      const secretFiles = new Map(asArray(firstContainer(grafana)['volumeMounts']).map(asRecord).filter((m) => secretVolumes.includes(m['name'])).map((m) => [String(m['mountPath']), m]));
      for (const file of [...datasourceFiles(), '/run/secrets/grafana-admin-password']) {
        expect(secretFiles.get(file)?.['subPath'], file).toBe(posix.basename(file));
        expect(secretFiles.get(file)?.['readOnly'], file).toBe(true);
      }
      const envEntries = asArray(firstContainer(grafana)['env']).map(asRecord);
      for (const entry of envEntries.filter((e) => /TOKEN|PASSWORD/.test(String(e['name'])))) {
        expect(String(entry['name'])).toMatch(/_FILE$/);
        expect(secretFiles.has(String(entry['value'])), String(entry['name'])).toBe(true);
      }
      expect(envEntries.map((e) => e['name'])).toContain('GF_SECURITY_ADMIN_PASSWORD__FILE');
    });

    it('lists only manifests that exist, one namespace for all', () => {
      for (const file of asArray(kustomization['resources'])) expect(existsSync(join(k8sDirectory, String(file))), String(file)).toBe(true);
      expect(kustomization['namespace']).toBe(asRecord(k8sObject('Namespace', 'warpwatch')['metadata'])['name']);
    });

    it('runs the collector as a DaemonSet with the host socket folder mounted where WARPWATCH_SOCKET points', () => {
      const daemonSet = k8sObject('DaemonSet', 'warpwatch-collector');
      const container = firstContainer(daemonSet);
      expect(container['args']).toEqual([SERVICE_COMMANDS.collector]);
      const socket = String(k8sEnv(daemonSet).get('WARPWATCH_SOCKET')?.['value']);
      const mount = asArray(container['volumeMounts']).map(asRecord).find((m) => m['mountPath'] === posix.dirname(socket));
      expect(mount, 'volumeMount of the socket folder').toBeDefined();
      const volume = asArray(podSpec(daemonSet)['volumes']).map(asRecord).find((v) => v['name'] === mount?.['name']);
      expect(asRecord(volume?.['hostPath'])['path']).toBe(COLLECTOR_SOCKET_DIRECTORY);
    });

    it('uses the image built from the repository (no placeholder registry)', () => {
      const images = asArray(kustomization['images']).map(asRecord);
      expect(images.map((i) => [i['name'], i['newName']])).toEqual([['warpwatch', 'warpwatch']]);
      expect(readFileSync(join(k8sDirectory, 'kustomization.yaml'), 'utf8')).not.toContain('example');
    });

    it('makes the socket folder owned by the collector alone (init container: owner 1000, group 2000, 0750) with socket mode 0660', () => {
      const daemonSet = k8sObject('DaemonSet', 'warpwatch-collector');
      expect(k8sEnv(daemonSet).get('WARPWATCH_SOCKET_MODE')?.['value']).toBe('0660');
      const security = asRecord(podSpec(daemonSet)['securityContext']);
      expect(security).toMatchObject({ runAsUser: 1000, runAsGroup: 2000, runAsNonRoot: true });
      const init = asArray(podSpec(daemonSet)['initContainers']).map(asRecord);
      expect(init.map((c) => asArray(c['command']).join(' ')).join('\n')).toContain('chown 1000:2000 /run/warpwatch && chmod 0750 /run/warpwatch');
    });

    it('runs estimators as a Deployment with replicas <= the frames topic partitions', () => {
      const deployment = k8sObject('Deployment', 'warpwatch-estimator');
      expect(firstContainer(deployment)['args']).toEqual([SERVICE_COMMANDS.estimator]);
      const [node, ...cli] = IMAGE_ENTRYPOINT;
      expect(firstContainer(deployment)['command']).toEqual([node, ...ESTIMATOR_NODE_FLAGS, ...cli]);
      const replicas = Number(asRecord(deployment['spec'])['replicas']);
      const partitions = Number(k8sEnv(deployment).get('WARPWATCH_KAFKA_PARTITIONS')?.['value'] ?? ESTIMATOR_FIELDS.partitions.default);
      expect(replicas).toBeGreaterThanOrEqual(1);
      expect(replicas).toBeLessThanOrEqual(partitions);
    });

    it('passes each service only env variables its config fields define, with values they accept, and the ConfigMap only keys some service reads', () => {
      const readByAny = new Set<string>();
      for (const service of SERVICES) {
        const known = envNamesReadBy(service);
        for (const name of known) readByAny.add(name);
        const explicit = asArray(firstContainer(k8sObject(K8S_WORKLOADS[service].kind, K8S_WORKLOADS[service].name))['env']).map((e) => String(asRecord(e)['name']));
        // WARPWATCH_LABEL_<NAME> is a family: the collector reads every variable with that prefix.
        const knows = (name: string): boolean => known.has(name) || (name.startsWith('WARPWATCH_LABEL_') && known.has('WARPWATCH_LABEL_'));
        for (const name of explicit) expect(knows(name), `${service}: ${name} is not read by ${SERVICE_CONFIG_MODULES[service]}`).toBe(true);
        const literals = Object.fromEntries([...k8sEnv(k8sObject(K8S_WORKLOADS[service].kind, K8S_WORKLOADS[service].name))].flatMap(([name, entry]) => (entry['value'] === undefined ? [] : [[name, String(entry['value'])]])));
        expect(valueProblems(service, literals), service).toEqual([]);
      }
      for (const key of Object.keys(configMapData())) expect(readByAny, `ConfigMap key ${key}`).toContain(key);
    });

    it('uses the topic names of the code', () => {
      const topicKeys = Object.entries(configMapData()).filter(([key]) => key.endsWith('_TOPIC'));
      expect(topicKeys.length).toBeGreaterThan(0);
      for (const [key, value] of topicKeys) expect(Object.values(TOPICS), key).toContain(value);
      expect(configMapData()['WARPWATCH_FRAMES_TOPIC']).toBe(TOPICS.frames);
    });

    it('exposes metrics ports that match WARPWATCH_METRICS_PORT and probes /healthz there', () => {
      for (const service of SERVICES) {
        const workload = k8sObject(K8S_WORKLOADS[service].kind, K8S_WORKLOADS[service].name);
        const container = firstContainer(workload);
        const port = Number(k8sEnv(workload).get('WARPWATCH_METRICS_PORT')?.['value']);
        expect(port).toBe(service === 'collector' ? CONTAINER_PORTS.collectorMetrics : CONTAINER_PORTS.estimatorMetrics);
        const named = asArray(container['ports']).map(asRecord).find((p) => p['containerPort'] === port);
        expect(named, `${service} containerPort ${port}`).toBeDefined();
        for (const probe of ['readinessProbe', 'livenessProbe']) {
          const httpGet = asRecord(asRecord(container[probe])['httpGet']);
          expect(httpGet['path']).toBe('/healthz');
          expect(httpGet['port']).toBe(named?.['name']);
        }
      }
    });

    it('takes credentials from Secrets by reference, never as literal values; passwords and tokens as mounted files, not environment variables', () => {
      for (const service of SERVICES) {
        const workload = k8sObject(K8S_WORKLOADS[service].kind, K8S_WORKLOADS[service].name);
        const env = k8sEnv(workload);
        // The folder the Secret warpwatch-secrets is mounted at.
        const secretVolume = asArray(podSpec(workload)['volumes']).map(asRecord).find((v) => asRecord(v['secret'])['secretName'] === 'warpwatch-secrets');
        const mount = asArray(firstContainer(workload)['volumeMounts']).map(asRecord).find((m) => m['name'] === secretVolume?.['name']);
        expect(mount?.['readOnly'], service).toBe(true);
        for (const [name, entry] of env) {
          if (/TOKEN|PASSWORD|TLS_KEY/.test(name)) {
            expect(name, `${service}: a secret in an environment variable`).toMatch(/_FILE$/);
            expect(String(entry['value']).startsWith(`${String(mount?.['mountPath'])}/`), `${service}: ${name}`).toBe(true);
          }
          if (/SASL_USERNAME/.test(name)) expect(asRecord(asRecord(entry['valueFrom'])['secretKeyRef'])['name'], `${service}: ${name}`).toBe('warpwatch-secrets');
        }
        expect([...env.keys()], service).toEqual(expect.arrayContaining(['WARPWATCH_INFLUX_TOKEN_FILE', 'WARPWATCH_KAFKA_SASL_PASSWORD_FILE']));
      }
      expect(k8sObjects.filter((o) => o['kind'] === 'Secret')).toEqual([]);
      expect(dirname(k8sDirectory)).toBe(deployDirectory);
    });
  });
});

describe('deploy/k8s/examples/metrics-network-policy.yaml', () => {
  const policy = asRecord(parse(readFileSync(join(k8sDirectory, 'examples', 'metrics-network-policy.yaml'), 'utf8')));
  const spec = asRecord(policy['spec']);

  it('selects the collector and estimator pods and admits only Prometheus, on their metrics ports only', () => {
    expect(policy['kind']).toBe('NetworkPolicy');
    const selected = asArray(asRecord(asArray(asRecord(spec['podSelector'])['matchExpressions'])[0])['values']);
    for (const service of SERVICES) {
      const labels = asRecord(asRecord(asRecord(asRecord(k8sObject(K8S_WORKLOADS[service].kind, K8S_WORKLOADS[service].name)['spec'])['template'])['metadata'])['labels']);
      expect(selected).toContain(labels['app.kubernetes.io/name']);
    }
    expect(spec['policyTypes']).toEqual(['Ingress']);
    const rules = asArray(spec['ingress']).map(asRecord);
    expect(rules).toHaveLength(1);
    const from = asArray(rules[0]?.['from']).map(asRecord);
    expect(from).toHaveLength(1);
    expect(asRecord(asRecord(from[0]?.['podSelector'])['matchLabels'])['app.kubernetes.io/name']).toBe('prometheus');
    const ports = asArray(rules[0]?.['ports']).map((p) => asRecord(p)['port']);
    expect(ports.sort()).toEqual([CONTAINER_PORTS.collectorMetrics, CONTAINER_PORTS.estimatorMetrics].sort());
  });
});

describe('Grafana datasource credentials', () => {
  it('carries the InfluxDB token only in secureJsonData (encrypted by Grafana), never in jsonData', () => {
    const datasources = asArray(asRecord(parse(readFileSync(join(deployDirectory, 'grafana', 'datasources', 'warpwatch-influxql.yaml'), 'utf8')))['datasources']).map(asRecord);
    for (const datasource of datasources) {
      expect(JSON.stringify(datasource['jsonData'] ?? {})).not.toMatch(/TOKEN|PASSWORD/);
      expect(JSON.stringify(datasource).replace(JSON.stringify(datasource['secureJsonData'] ?? {}), '')).not.toMatch(/TOKEN|PASSWORD/);
    }
    // Read from the secret file (compose secret, k8s Secret), not from an environment variable.
    expect(JSON.stringify(datasources.map((d) => d['secureJsonData']))).toContain('Token $__file{/run/secrets/influx-token}');
    expect(JSON.stringify(datasources)).not.toMatch(/\$\{[A-Z0-9_]*TOKEN/);
  });
});
