// The Prometheus alerting rules as Prometheus itself reads them: `promtool check rules` on the
// generated rules file and on the PrometheusRule's spec, `promtool test rules` on the hand-written
// unit tests (deploy/prometheus/tests), and the wiring of compose, prometheus.yml, the Prometheus
// Operator overlay and the Alertmanager example. promtool comes with Debian's `prometheus` package
// (.ci/run installs it); WARPWATCH_PROMTOOL names another binary.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { ALERT_DEFINITIONS, GENERATED_PATHS, PROMETHEUS_JOBS } from '../../dashboards/index.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const rulesFile = join(root, GENERATED_PATHS.prometheusRules);
const unitTestsFile = join(root, 'deploy/prometheus/tests/warpwatch.rules.test.yaml');
const scratch = mkdtempSync(join(tmpdir(), 'ww-promtool-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

type Yaml = Record<string, unknown>;
const asRecord = (value: unknown): Yaml => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Yaml) : {});
const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

function findPromtool(env: NodeJS.ProcessEnv): string | undefined {
  const explicit = env['WARPWATCH_PROMTOOL']?.trim();
  if (explicit) return existsSync(explicit) ? explicit : undefined;
  return (env['PATH'] ?? '').split(delimiter).map((folder) => join(folder, 'promtool')).find((path) => path !== 'promtool' && existsSync(path));
}

const promtoolPath = findPromtool(process.env);

function promtool(...args: string[]): { status: number | null; output: string } {
  if (promtoolPath === undefined) throw new Error('promtool not found: install Debian\'s `prometheus` package (.ci/run does) or set WARPWATCH_PROMTOOL');
  const result = spawnSync(promtoolPath, args, { encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

const rules = asRecord(parse(readFileSync(rulesFile, 'utf8')));
const alertRules = asArray(rules['groups']).flatMap((g) => asArray(asRecord(g)['rules']).map(asRecord)).filter((r) => typeof r['alert'] === 'string');
const unitTests = asRecord(parse(readFileSync(unitTestsFile, 'utf8')));

describe('Prometheus rules checked and unit-tested by promtool', () => {
  it('promtool is installed (Debian package prometheus, or WARPWATCH_PROMTOOL)', () => {
    expect(promtoolPath, 'install Debian\'s `prometheus` package (.ci/run does) or set WARPWATCH_PROMTOOL').toBeDefined();
  });

  it('`promtool check rules` accepts the rules file: 3 recording rules and one alert per definition', () => {
    const { status, output } = promtool('check', 'rules', rulesFile);
    expect(output).toContain(`SUCCESS: ${3 + Object.keys(ALERT_DEFINITIONS).length} rules found`);
    expect(status, output).toBe(0);
  });

  it('`promtool check rules` accepts the PrometheusRule\'s spec (what the Operator loads)', () => {
    const [manifest] = parseAllDocuments(readFileSync(join(root, GENERATED_PATHS.k8sPrometheusRule), 'utf8')).map((d) => asRecord(d.toJS()));
    expect(manifest?.['kind']).toBe('PrometheusRule');
    const file = join(scratch, 'operator-spec.yaml');
    writeFileSync(file, stringify(manifest?.['spec']));
    const { status, output } = promtool('check', 'rules', file);
    expect(status, output).toBe(0);
  });

  it('`promtool check rules` refuses a broken rule (the check can fail)', () => {
    const file = join(scratch, 'broken.yaml');
    writeFileSync(file, readFileSync(rulesFile, 'utf8').replace('max by (', 'max by ((('));
    expect(promtool('check', 'rules', file).status).not.toBe(0);
  });

  it('`promtool test rules` passes the unit tests of every alert', () => {
    const { status, output } = promtool('test', 'rules', unitTestsFile);
    expect(status, output).toBe(0);
    expect(output).toContain('SUCCESS');
  });

  it.each([
    ['without the minimum volume', '>= 1000', '>= 0'],
    ['with the independent-lanes prediction only', `(warpwatch_loss_locality)`, '(warpwatch_loss_none)'],
    ['with a down target not counted', 'up{job="warpwatch-estimator"} == 0', 'up{job="warpwatch-estimator"} == 2'],
  ])('the unit tests fail against rules %s', (_name, from, to) => {
    const folder = join(scratch, `mutant-${to.replace(/\W/g, '')}`);
    mkdirSync(join(folder, 'rules'), { recursive: true });
    mkdirSync(join(folder, 'tests'), { recursive: true });
    const text = readFileSync(rulesFile, 'utf8');
    expect(text).toContain(from);
    writeFileSync(join(folder, 'rules', 'warpwatch.rules.yaml'), text.replaceAll(from, to));
    copyFileSync(unitTestsFile, join(folder, 'tests', 'warpwatch.rules.test.yaml'));
    const { status, output } = promtool('test', 'rules', join(folder, 'tests', 'warpwatch.rules.test.yaml'));
    expect(status, output).not.toBe(0);
  });

  it('the unit tests load the committed rules file and check every alert firing and silent', () => {
    expect(unitTests['rule_files']).toEqual(['../rules/warpwatch.rules.yaml']);
    const cases = asArray(unitTests['tests']).flatMap((t) => asArray(asRecord(t)['alert_rule_test']).map(asRecord));
    for (const rule of alertRules) {
      const mine = cases.filter((c) => c['alertname'] === rule['alert']);
      expect(mine.some((c) => asArray(c['exp_alerts']).length > 0), `${String(rule['alert'])} fires somewhere`).toBe(true);
      expect(mine.some((c) => asArray(c['exp_alerts']).length === 0), `${String(rule['alert'])} is silent somewhere`).toBe(true);
    }
  });
});

describe('rules wiring', () => {
  it('every runbook_url points at a section of docs/alerts.md', () => {
    const headings = new Set(
      readFileSync(join(root, 'docs/alerts.md'), 'utf8')
        .split('\n')
        .filter((line) => line.startsWith('## '))
        .map((line) => line.slice(3).trim().toLowerCase().replace(/[^a-z0-9 -]/g, '').replaceAll(' ', '-')),
    );
    expect(alertRules).toHaveLength(Object.keys(ALERT_DEFINITIONS).length);
    for (const rule of alertRules) {
      const url = String(asRecord(rule['annotations'])['runbook_url']);
      const [path, anchor] = url.split('#');
      expect(path, url).toBe('docs/alerts.md');
      expect(headings.has(anchor ?? ''), `${url}: no "## ${String(rule['alert'])}" section`).toBe(true);
    }
  });

  it('compose mounts the rules where prometheus.yml loads them, and promtool accepts prometheus.yml', () => {
    const compose = asRecord(parse(readFileSync(join(root, 'deploy/compose.yaml'), 'utf8'), { merge: true }));
    const prometheus = asRecord(asRecord(compose['services'])['prometheus']);
    expect(asArray(prometheus['volumes'])).toContain('./prometheus/rules:/etc/prometheus/rules:ro');
    expect(GENERATED_PATHS.prometheusRules.startsWith('deploy/prometheus/rules/')).toBe(true);
    const config = asRecord(parse(readFileSync(join(root, 'deploy/prometheus/prometheus.yml'), 'utf8')));
    expect(config['rule_files']).toEqual(['/etc/prometheus/rules/*.yaml']);
    // Alerts go to the compose Alertmanager.
    const alertmanager = asRecord(asRecord(compose['services'])['alertmanager']);
    expect(asArray(alertmanager['volumes'])).toContain('./alertmanager/alertmanager.yml:/etc/alertmanager/alertmanager.yml:ro');
    expect(JSON.stringify(config['alerting'])).toContain('alertmanager:9093');
    const { status, output } = promtool('check', 'config', join(root, 'deploy/prometheus/prometheus.yml'));
    expect(status, output).toBe(0);
  });

  it('the scrape jobs of compose and of the Operator\'s PodMonitors are the jobs the rules select on', () => {
    const config = asRecord(parse(readFileSync(join(root, 'deploy/prometheus/prometheus.yml'), 'utf8')));
    expect(asArray(config['scrape_configs']).map((c) => asRecord(c)['job_name'])).toEqual([PROMETHEUS_JOBS.estimator, PROMETHEUS_JOBS.collector]);
    const monitors = parseAllDocuments(readFileSync(join(root, 'deploy/k8s/prometheus-operator/pod-monitors.yaml'), 'utf8')).map((d) => asRecord(d.toJS()));
    const jobs = monitors.map((m) => {
      const spec = asRecord(m['spec']);
      const jobLabel = String(spec['jobLabel']);
      return asRecord(asRecord(spec['selector'])['matchLabels'])[jobLabel];
    });
    expect(jobs.sort()).toEqual([PROMETHEUS_JOBS.collector, PROMETHEUS_JOBS.estimator]);
    const ruleText = readFileSync(rulesFile, 'utf8');
    for (const job of Object.values(PROMETHEUS_JOBS)) expect(ruleText).toContain(`up{job="${job}"}`);
  });

  it('the Operator overlay adds the PrometheusRule and PodMonitors to the base stack', () => {
    const folder = join(root, 'deploy/k8s/prometheus-operator');
    const kustomization = asRecord(parse(readFileSync(join(folder, 'kustomization.yaml'), 'utf8')));
    expect(kustomization['resources']).toEqual(['..', 'pod-monitors.yaml', 'prometheus-rule.yaml']);
    expect(kustomization['namespace']).toBe(asRecord(parse(readFileSync(join(root, 'deploy/k8s/kustomization.yaml'), 'utf8')))['namespace']);
    expect(`deploy/k8s/prometheus-operator/prometheus-rule.yaml`).toBe(GENERATED_PATHS.k8sPrometheusRule);
  });

  it('the Alertmanager example routes warpwatch alerts by severity to receivers it defines', () => {
    const config = asRecord(parse(readFileSync(join(root, 'deploy/alertmanager/alertmanager.yml'), 'utf8')));
    const defined = new Set(asArray(config['receivers']).map((r) => asRecord(r)['name']));
    const routes: Yaml[] = [];
    const walk = (route: Yaml): void => {
      routes.push(route);
      for (const child of asArray(route['routes'])) walk(asRecord(child));
    };
    walk(asRecord(config['route']));
    for (const route of routes) expect(defined.has(route['receiver']), String(route['receiver'])).toBe(true);
    const matchers = routes.flatMap((r) => asArray(r['matchers']).map(String));
    expect(matchers).toEqual(['alertname=~"Warpwatch.*"', 'severity="critical"']);
    // Every alert name an inhibit rule names exists.
    const names = new Set(Object.values(ALERT_DEFINITIONS).map((d) => d.alertname));
    const inhibitText = JSON.stringify(config['inhibit_rules']);
    for (const name of inhibitText.match(/Warpwatch[A-Za-z]+/g) ?? []) expect(names.has(name), name).toBe(true);
    expect(new Set(Object.values(ALERT_DEFINITIONS).map((d) => d.severity))).toEqual(new Set(['critical', 'warning']));
  });
});
