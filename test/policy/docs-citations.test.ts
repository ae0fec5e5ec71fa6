import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { defaultSocketPath } from '../../collector/index.ts';
import { createProgram } from '../../cli/main.ts';

// The docs must stand alone. Every "model.md §2c"-style citation in help text, code and
// docs must name a page in the repository and a section heading that page has ("## 2. …",
// "### 2c. …"); nothing may point outside the repository (../shared).

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const SCANNED_FOLDERS = ['cli', 'model', 'estimator', 'bench', 'docs'];

function filesUnder(folder: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(folder)) {
    if (name === 'node_modules' || name === 'generated' || name === 'results' || name.startsWith('.')) continue;
    const path = join(folder, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else if (/\.(ts|md)$/.test(name)) out.push(path);
  }
  return out;
}

/** Section ids ('2', '2c', '10') of a markdown page: headings that start with "N." or "Na.". */
function sectionsOf(page: string): Set<string> {
  const ids = new Set<string>();
  for (const line of readFileSync(page, 'utf8').split('\n')) {
    const match = /^#{1,6}\s+(\d+[a-z]?)\.\s/.exec(line);
    if (match !== null) ids.add(match[1]!);
  }
  return ids;
}

function headingsOf(page: string): string[] {
  return readFileSync(page, 'utf8')
    .split('\n')
    .filter((line) => /^#{1,6}\s/.test(line));
}

/** The page a citation names, looked up from the repository root, docs/ and the citing file's folder. */
function resolvePage(name: string, citingFile: string | undefined): string | undefined {
  const candidates = [join(ROOT, name), join(ROOT, 'docs', name.replace(/^.*\//, '')), ...(citingFile === undefined ? [] : [join(dirname(citingFile), name)])];
  return candidates.find((path) => existsSync(path) && statSync(path).isFile());
}

function expandRange(from: string, to: string | undefined): string[] {
  if (to === undefined) return [from];
  const start = Number.parseInt(from, 10);
  const end = Number.parseInt(to, 10);
  if (!/^\d+$/.test(from) || !/^\d+$/.test(to) || end < start) return [from, to];
  return Array.from({ length: end - start + 1 }, (_, i) => String(start + i));
}

/**
 * Every broken citation in `text`: 'model.md §2c' (page + section), 'architecture.md "Heading"'
 * (page + heading text), 'docs/x.md' (page), a '§' with no page before it, and '../shared'.
 */
export function brokenCitations(text: string, citingFile?: string): string[] {
  const problems: string[] = [];
  const sectionCitation = /([\w./-]*\.md)\)?\]?\s*\(?§\s?(\d+[a-z]?)(?:\s*[–-]\s*§?(\d+[a-z]?))?/g;
  const covered = new Set<number>();
  for (const match of text.matchAll(sectionCitation)) {
    const page = resolvePage(match[1]!, citingFile);
    covered.add(match.index + match[0].indexOf('§'));
    if (page === undefined) {
      problems.push(`${match[0]}: no page ${match[1]} in the repository`);
      continue;
    }
    const sections = sectionsOf(page);
    for (const id of expandRange(match[2]!, match[3])) if (!sections.has(id)) problems.push(`${match[0]}: ${relative(ROOT, page)} has no section §${id}`);
  }
  for (const match of text.matchAll(/([\w./-]*\.md) "([^"]+)"/g)) {
    const page = resolvePage(match[1]!, citingFile);
    if (page === undefined) problems.push(`${match[0]}: no page ${match[1]} in the repository`);
    else if (!headingsOf(page).some((heading) => heading.includes(match[2]!))) problems.push(`${match[0]}: ${relative(ROOT, page)} has no heading '${match[2]}'`);
  }
  for (const match of text.matchAll(/(?:^|[\s(`'[])(docs\/[\w-]+\.md)/g)) {
    if (resolvePage(match[1]!, citingFile) === undefined) problems.push(`${match[1]}: no such page`);
  }
  if (/\.\.\/shared|shared\/design/.test(text)) problems.push('refers outside the repository (../shared)');
  return problems;
}

/** § signs in help text that follow no page name ("fast (§2b)"): a newcomer cannot look them up. */
function unanchoredSections(text: string): string[] {
  const out: string[] = [];
  for (const match of text.matchAll(/§\s?\d+[a-z]?/g)) {
    const before = text.slice(Math.max(0, match.index - 40), match.index);
    if (!/\.md\)?\]?\s*\(?$/.test(before) && !/\.md §\d+[a-z]?\s*[–-]\s*$/.test(before)) out.push(`'${text.slice(Math.max(0, match.index - 20), match.index + 4)}'`);
  }
  return out;
}

function allCommands(command: Command): Command[] {
  return [command, ...command.commands.flatMap(allCommands)];
}

describe('docs citations', () => {
  describe('brokenCitations', () => {
    it('accepts sections that exist and reports those that do not', () => {
      expect(brokenCitations('see docs/model.md §2c and model.md §4–§6')).toEqual([]);
      expect(brokenCitations('architecture.md "Names that are shared contracts"')).toEqual([]);
      expect(brokenCitations('model.md §99')).toEqual(['model.md §99: docs/model.md has no section §99']);
      expect(brokenCitations('nowhere.md §1')).toHaveLength(1);
      expect(brokenCitations('architecture.md "No such heading"')).toHaveLength(1);
      expect(brokenCitations('docs/missing-page.md')).toHaveLength(1);
      expect(brokenCitations('the design in ../shared/design/model.md')).not.toEqual([]);
    });
  });

  it('every section cited in the help of every command exists, and every § names its page', async () => {
    const problems: string[] = [];
    for (const command of allCommands(await createProgram())) {
      const help = command.helpInformation();
      problems.push(...brokenCitations(help).map((p) => `warpwatch ${command.name()}: ${p}`));
      problems.push(...unanchoredSections(help.replace(/\s+/g, ' ')).map((p) => `warpwatch ${command.name()}: § without a page in ${p}`));
    }
    expect(problems).toEqual([]);
  });

  it('every section cited in code and docs (cli, model, estimator, bench, docs, README) exists', () => {
    const files = [...SCANNED_FOLDERS.flatMap((folder) => filesUnder(join(ROOT, folder))), join(ROOT, 'README.md')];
    expect(files.length).toBeGreaterThan(100);
    const problems: string[] = [];
    for (const file of files) {
      if (file.endsWith('docs-citations.test.ts')) continue; // its own examples of broken citations
      const text = readFileSync(file, 'utf8');
      problems.push(...brokenCitations(text, file).map((p) => `${relative(ROOT, file)}: ${p}`));
    }
    expect(problems).toEqual([]);
  });

  it('docs/model.md numbers the sections the code cites (§1–§10, §2a–§2d)', () => {
    const sections = sectionsOf(join(ROOT, 'docs', 'model.md'));
    for (const id of ['1', '2', '2a', '2b', '2c', '2d', '3', '4', '5', '6', '7', '8', '9', '10']) expect(sections.has(id), `§${id}`).toBe(true);
    expect(existsSync(join(ROOT, 'docs', 'architecture.md'))).toBe(true);
  });
});

// README.md and docs/ quote repository paths, npm scripts, the collector's default socket and the
// demo's run times; these checks keep the quotes true where that needs no run (docs/demo.md).

/** README.md and every page under docs/, relative to the repository root. */
function userDocs(): string[] {
  return ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
}

/** Quoted paths that name no committed file on purpose, each with why. */
const NOT_COMMITTED: Readonly<Record<string, string>> = {
  'deploy/.env': 'the user writes it; docker compose reads it from deploy/',
  'deploy/secrets/influx-token': 'deploy/make-compose-secrets.sh writes it (gitignored: a secret)',
};

/**
 * Repository paths `text` quotes: in backticks, or in prose with a file extension, starting with a
 * top-level folder of the repository (`deploy/k8s/`, cli/commands/demo.ts). Globs and "..." are left out.
 */
export function quotedRepositoryPaths(text: string, topFolders: readonly string[]): string[] {
  const folders = topFolders.map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
  const paths = new Set<string>();
  for (const match of text.matchAll(new RegExp(`\`((?:${folders})/[\\w./-]*)\``, 'g'))) paths.add(match[1]!);
  for (const match of text.matchAll(new RegExp(`(?<![\\w./$<{-])((?:${folders})/[\\w./-]*\\.[a-z]+)\\b`, 'g'))) paths.add(match[1]!);
  return [...paths].filter((path) => !/\*|\.\.\./.test(path)).map((path) => path.replace(/[.]$/, ''));
}

describe('quoted paths, scripts, defaults and timings in README.md and docs/', () => {
  const topFolders = readdirSync(ROOT).filter((name) => !name.startsWith('.') && name !== 'node_modules' && statSync(join(ROOT, name)).isDirectory());
  const docs = userDocs().map((file) => ({ file, text: readFileSync(join(ROOT, file), 'utf8') }));

  it('quotedRepositoryPaths finds backticked and prose paths under top-level folders only', () => {
    expect(quotedRepositoryPaths('see `deploy/k8s/` and cli/commands/demo.ts, not a/b.ts or `collector/estimator` pairs', ['deploy', 'cli', 'collector']).sort()).toEqual(
      ['cli/commands/demo.ts', 'collector/estimator', 'deploy/k8s/'].sort(),
    );
    expect(quotedRepositoryPaths('`docs/*.md`, `deploy/...`, ${X}/cli/x.ts', ['docs', 'deploy', 'cli'])).toEqual([]);
  });

  it('every repository path the docs quote exists', () => {
    const missing: string[] = [];
    let checked = 0;
    for (const { file, text } of docs) {
      for (const path of quotedRepositoryPaths(text, topFolders)) {
        checked += 1;
        if (!(path in NOT_COMMITTED) && !existsSync(join(ROOT, path))) missing.push(`${file}: ${path}`);
      }
    }
    expect(checked).toBeGreaterThan(100);
    expect(missing).toEqual([]);
  });

  it('every `npm run <script>` the docs name is a script in package.json', () => {
    const scripts = Object.keys((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts);
    const named = docs.flatMap(({ file, text }) => [...text.matchAll(/npm run ([\w:-]+)/g)].map((m) => ({ file, script: m[1]! })));
    expect(named.length).toBeGreaterThan(5);
    expect(named.filter(({ script }) => !scripts.includes(script)).map(({ file, script }) => `${file}: npm run ${script}`)).toEqual([]);
  });

  it("the collector's default socket the docs give is the code's (collector/config.ts defaultSocketPath)", () => {
    const xdg = defaultSocketPath({ XDG_RUNTIME_DIR: '/run/user/1000' }).replace('/run/user/1000', '$XDG_RUNTIME_DIR');
    const uid = process.getuid?.() ?? 0;
    const fallback = defaultSocketPath({}).replace(`warpwatch-${uid}`, 'warpwatch-<uid>');
    expect(xdg).toBe('$XDG_RUNTIME_DIR/warpwatch/collector.sock');
    const wrong: string[] = [];
    let quoted = 0;
    for (const { file, text } of docs) {
      for (const match of text.matchAll(/\$XDG_RUNTIME_DIR\/[\w./-]*|\/tmp\/warpwatch[\w<>./-]*|\$TMPDIR\/warpwatch[\w<>./-]*/g)) {
        quoted += 1;
        const path = match[0].replace(/\.$/, '');
        // A quote may stop at the folder ("/tmp/warpwatch-<uid>/"), never differ.
        if (!xdg.startsWith(path) && !fallback.startsWith(path)) wrong.push(`${file}: ${path} (the code's default: ${xdg}, else ${fallback})`);
      }
    }
    expect(quoted).toBeGreaterThanOrEqual(4);
    expect(wrong).toEqual([]);
  });

  it('the run times quoted for `demo --quick` and the full demo are the same range everywhere, quick below full', () => {
    const quick = new Set<string>();
    const full = new Set<string>();
    for (const { text } of docs) {
      for (const line of text.split('\n')) {
        const range = /(\d+)–(\d+) s\b/.exec(line);
        if (range === null) continue;
        if (/demo --quick|^\|\s*`--quick`/.test(line)) quick.add(range[0]);
        else if (/npm run demo\b|warpwatch demo\b/.test(line)) full.add(range[0]);
      }
    }
    expect([...quick]).toHaveLength(1);
    expect([...full]).toHaveLength(1);
    const [quickLow, quickHigh] = [...quick][0]!.match(/\d+/g)!.map(Number);
    const [fullLow, fullHigh] = [...full][0]!.match(/\d+/g)!.map(Number);
    expect(quickLow!).toBeLessThan(fullLow!);
    expect(quickHigh!).toBeLessThan(fullHigh!);
  });
});

// Source comments cite files by repository path (docs/architecture.md §2); a moved file must not
// leave stale citations behind. Lint-rule and citation tests name made-up files on purpose.
describe('repository paths quoted in source files', () => {
  const topFolders = readdirSync(ROOT).filter((name) => !name.startsWith('.') && name !== 'node_modules' && statSync(join(ROOT, name)).isDirectory());
  /** Made-up paths on purpose: the files that name them as test inputs, each with why. */
  const MADE_UP: Readonly<Record<string, string>> = {
    'test/policy': 'the lint-boundary and citation tests lint made-up files and quote broken citations',
    'cli/compiled-cli.test.ts': 'writes model/a.ts into a scratch tree',
  };
  const sourceFiles = (folder: string): string[] =>
    readdirSync(folder).flatMap((name) => {
      if (['node_modules', 'generated', 'results', 'build', '__pycache__', '.cpp-reference'].includes(name) || name.startsWith('.')) return [];
      const path = join(folder, name);
      if (statSync(path).isDirectory()) return sourceFiles(path);
      return /\.(ts|js|mjs|hpp|cuh|cpp|cu|py|sh)$/.test(name) ? [path] : [];
    });

  it('every repository path a source file quotes exists (comments follow moved files)', () => {
    const missing: string[] = [];
    let checked = 0;
    // Build outputs (dist/, out/, test-output/: .gitignore) are not sources.
    for (const folder of topFolders.filter((name) => !['dist', 'out', 'test-output'].includes(name))) {
      for (const file of sourceFiles(join(ROOT, folder))) {
        const rel = relative(ROOT, file);
        if (Object.keys(MADE_UP).some((prefix) => rel === prefix || rel.startsWith(`${prefix}/`))) continue;
        for (const path of quotedRepositoryPaths(readFileSync(file, 'utf8'), topFolders)) {
          checked += 1;
          if (!(path in NOT_COMMITTED) && !existsSync(join(ROOT, path))) missing.push(`${rel}: ${path}`);
        }
      }
    }
    expect(checked).toBeGreaterThan(200);
    expect(missing).toEqual([]);
  });
});
