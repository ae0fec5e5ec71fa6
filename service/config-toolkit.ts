import { readFileSync } from 'node:fs';
import type { ByteSizeField, ConfigField, ConfigFields, FamilyField, FileField, ListField, SecretField, TextField } from '../contracts/index.ts';
import { Secret } from './secret.ts';

/** The process environment, or a test's stand-in. */
export type EnvSource = Readonly<Record<string, string | undefined>>;

/** A command-line flag as the CLI received it (undefined = not given). */
export type FlagValue = string | boolean | readonly string[] | undefined;

/** Reads a text file (credential, certificate); injectable for tests. */
export type ReadTextFile = (path: string) => string;

/** One bad setting: which variable or flag, the value it had (never for a secret), and why it is refused. */
export interface ConfigProblem {
  /** The variable (`WARPWATCH_*`) or flag (`--partitions`) that carried the value. */
  readonly name: string;
  /** The value as given; absent when none was (a required setting) or it is a credential. */
  readonly value?: string;
  /** What is wrong or allowed, e.g. `must be an integer 1..10000`. */
  readonly why: string;
}

/** One variable of a family (`WARPWATCH_LABEL_POD=trainer-0` → name `pod`). */
export interface FamilyEntry {
  readonly env: string;
  readonly name: string;
  readonly value: string;
}

type BaseValue<F> = F extends { kind: 'integer' | 'number' | 'bytes' | 'octal' }
  ? number
  : F extends { kind: 'boolean' }
    ? boolean
    : F extends { kind: 'choice'; values: readonly (infer V)[] }
      ? V
      : F extends { kind: 'list' }
        ? readonly string[]
        : F extends { kind: 'integer-list' }
          ? readonly number[]
          : F extends { kind: 'secret' }
            ? Secret
            : F extends { kind: 'family' }
              ? readonly FamilyEntry[]
              : string;
type MissingValue<F> = F extends { default: unknown } ? never : F extends { kind: 'family' } ? never : undefined;
type OffValue<F> = F extends { offWord: true } ? (F extends { kind: 'list' | 'integer-list' } ? never : undefined) : never;

/** The type a field reads as: its kind's type, `undefined` when it has no default (unset) or takes `off`. */
export type FieldValue<F> = BaseValue<F> | MissingValue<F> | OffValue<F>;

/** The values of a set of fields, by the same keys. */
export type FieldValues<G> = { readonly [K in keyof G]: FieldValue<G[K]> };

const BYTE_UNITS: Readonly<Record<string, number>> = { '': 1, b: 1, k: 1e3, kb: 1e3, kib: 1024, m: 1e6, mb: 1e6, mib: 1024 ** 2, g: 1e9, gb: 1e9, gib: 1024 ** 3 };
const TRUE_WORDS = ['1', 'true', 'yes', 'on'];
const FALSE_WORDS = ['0', 'false', 'no', 'off'];
const SHOWN_VALUE_CHARS = 200;

// eslint-disable-next-line no-control-regex -- control characters are shown escaped, so the problem stays one line
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * One line for a problem: `<name> <why>, got "<value>"` (long values cut, their length told;
 * control characters shown as `\uXXXX`, so a newline in a value cannot split the line).
 *
 * @example formatConfigProblem({ name: '--partitions', value: '0', why: 'must be an integer 1..10000' }) // '--partitions must be an integer 1..10000, got "0"'
 */
export function formatConfigProblem(problem: ConfigProblem): string {
  if (problem.value === undefined) return `${problem.name} ${problem.why}`;
  const value = problem.value.replace(CONTROL_CHARACTERS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const shown = value.length > SHOWN_VALUE_CHARS ? `${value.slice(0, SHOWN_VALUE_CHARS)}…" (${problem.value.length} characters)` : `${value}"`;
  return `${problem.name} ${problem.why}, got "${shown}`;
}

const BINARY_UNITS: readonly (readonly [number, string])[] = [
  [1024 ** 3, 'GiB'],
  [1024 ** 2, 'MiB'],
  [1024, 'KiB'],
];

/**
 * A byte count as people write it: `64 MiB` when it is a whole number of KiB, MiB or GiB, else `<n> B`.
 *
 * @example formatByteSize(65536) // '64 KiB'
 */
export function formatByteSize(bytes: number): string {
  for (const [size, unit] of BINARY_UNITS) if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`;
  return `${bytes} B`;
}

/**
 * What a field accepts, in words (the docs tables and the error messages use it).
 *
 * @example describeAccepted({ kind: 'integer', env: 'X', min: 1, max: 5, doc: '' }) // 'an integer 1..5'
 */
export function describeAccepted(field: ConfigField): string {
  const off = 'offWord' in field && field.offWord === true ? ' or "off"' : '';
  switch (field.kind) {
    case 'integer':
      return `an integer ${field.min}..${field.max}${off}`;
    case 'number':
      return `a number ${field.min}..${field.max}${off}`;
    case 'bytes':
      return `a size ${formatByteSize(field.min)}..${formatByteSize(field.max)} (suffixes KiB, MiB, GiB, kB, MB, GB allowed)`;
    case 'octal':
      return 'octal permission bits like 0660';
    case 'boolean':
      return 'true or false';
    case 'choice':
      return `one of ${field.values.join('|')}`;
    case 'text':
      return field.patternText ?? field.checkText ?? (field.maxLength === undefined ? 'text' : `at most ${field.maxLength} characters`);
    case 'url':
      return `${field.expected ?? 'an http(s) URL'}${off}`;
    case 'list':
      return `a comma list of ${field.itemText}${off}`;
    case 'integer-list':
      return `a comma list of integers ${field.min}..${field.max}${off}`;
    case 'secret':
      return `a credential, or a file holding it (${field.fileEnv})`;
    case 'file':
      return 'a readable file';
    case 'family':
      return `one variable per name, ${field.prefix}<NAME>`;
  }
}

/**
 * Reads typed settings from environment variables and command-line flags, collecting every
 * problem instead of stopping at the first: a config module reads its slices with
 * {@link ConfigReader.read}, adds cross-field problems with {@link ConfigReader.report}, and
 * throws its own coded error when {@link ConfigReader.problems} is not empty. Flags (by field
 * key) win over variables; an empty variable counts as unset; a bad value is reported and the
 * field reads as its default, so later checks still run.
 *
 * @example
 * const reader = new ConfigReader({ env: process.env, flags: { partitions: '12' } });
 * const kafka = reader.read({ partitions: COLLECTOR_FIELDS.partitions }); // { partitions: 12 }
 * if (reader.problems.length > 0) throw new CollectorConfigError(reader.problems);
 */
export class ConfigReader {
  readonly #env: EnvSource;
  readonly #flags: Readonly<Record<string, FlagValue>>;
  readonly #readTextFile: ReadTextFile;
  readonly #problems: ConfigProblem[] = [];

  constructor(input: { env: EnvSource; flags?: Readonly<Record<string, FlagValue>> | object; readTextFile?: ReadTextFile | undefined }) {
    this.#env = input.env;
    this.#flags = (input.flags ?? {}) as Readonly<Record<string, FlagValue>>;
    this.#readTextFile = input.readTextFile ?? ((path) => readFileSync(path, 'utf8'));
  }

  /** Every problem found so far, in the order found (`reader.problems.map(formatConfigProblem)` for sentences). */
  get problems(): readonly ConfigProblem[] {
    return this.#problems;
  }

  /**
   * Adds a problem (a cross-field check of the config module).
   *
   * @example reader.report({ name: 'WARPWATCH_BATCH_MAX_BYTES', value: '2097152', why: 'must not exceed WARPWATCH_QUEUE_MAX_BYTES (1048576)' })
   */
  report(problem: ConfigProblem): void {
    this.#problems.push(problem);
  }

  /**
   * Reads a set of fields; the result has the same keys.
   *
   * @example reader.read(KAFKA_SECURITY_FIELDS).saslMechanism // 'plain' | 'scram-sha-256' | 'scram-sha-512' | undefined
   */
  read<G extends ConfigFields>(fields: G): FieldValues<G> {
    const values: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(fields)) values[key] = this.readField(key, field);
    return values as FieldValues<G>;
  }

  /**
   * The file a secret is read from (its `*_FILE` variable), or undefined when it is not read
   * from a file; for services that read the file again when the server refuses the secret.
   *
   * @example new ConfigReader({ env: { WARPWATCH_INFLUX_TOKEN_FILE: '/run/secrets/influx' } }).secretFile(INFLUX_FIELDS.influxToken) // '/run/secrets/influx'
   */
  secretFile(field: SecretField): string | undefined {
    return this.#envValue(field.fileEnv);
  }

  /**
   * Whether the field's flag (under `key`) or variable is set (non-blank); for a secret, also its `*_FILE` variable.
   *
   * @example new ConfigReader({ env: { WARPWATCH_KAFKA_SASL_MECHANISM: 'plain' } }).isSet('saslMechanism', KAFKA_SECURITY_FIELDS.saslMechanism) // true
   */
  isSet(key: string, field: ConfigField): boolean {
    return this.#raw(key, field) !== undefined || (field.kind === 'secret' && this.#envValue(field.fileEnv) !== undefined);
  }

  /**
   * The name a problem of this field carries: its flag when given, else its variable.
   *
   * @example new ConfigReader({ env: {}, flags: { partitions: '3' } }).nameOf('partitions', COLLECTOR_FIELDS.partitions) // '--partitions'
   */
  nameOf(key: string, field: ConfigField): string {
    const flag = this.#flags[key];
    return field.flag !== undefined && (typeof flag === 'boolean' || (typeof flag === 'string' && flag.trim() !== '')) ? field.flag : field.env;
  }

  /**
   * Reads one field (`key`: its flag's key in the flags object); a bad value is reported and reads as the default.
   *
   * @example new ConfigReader({ env: { WARPWATCH_SPOOL_MAX_BYTES: '512MiB' } }).readField('spoolMaxBytes', COLLECTOR_FIELDS.spoolMaxBytes) // 536870912
   */
  readField<F extends ConfigField>(key: string, field: F): FieldValue<F> {
    return this.#parse(key, field as ConfigField) as FieldValue<F>;
  }

  /** A variable's value; empty or blank counts as unset. */
  #envValue(name: string): string | undefined {
    const value = this.#env[name];
    return value === undefined || value.trim() === '' ? undefined : value;
  }

  /** The flag (when given and this field has one) or the variable, as given. */
  #raw(key: string, field: ConfigField): string | boolean | undefined {
    const flag = this.#flags[key];
    if (field.flag !== undefined && typeof flag === 'boolean') return flag;
    if (field.flag !== undefined && typeof flag === 'string' && flag.trim() !== '') return flag;
    return this.#envValue(field.env);
  }

  #parse(key: string, field: ConfigField): unknown {
    switch (field.kind) {
      case 'secret':
        return this.#secret(field);
      case 'file':
        return this.#file(field);
      case 'family':
        return this.#family(field);
      default:
        break;
    }
    const raw = this.#raw(key, field);
    const fallback = frozen('default' in field ? field.default : undefined);
    if (raw === undefined) return fallback;
    if (typeof raw === 'boolean') return field.kind === 'boolean' ? raw : fallback;
    const name = this.nameOf(key, field);
    const text = raw.trim();
    const refuse = (): unknown => {
      this.#problems.push({ name, value: raw, why: `must be ${describeAccepted(field)}` });
      return fallback;
    };
    const isOff = 'offWord' in field && field.offWord === true && text.toLowerCase() === 'off';
    switch (field.kind) {
      case 'integer': {
        if (isOff) return undefined;
        const value = Number(text);
        return /^-?\d+$/.test(text) && Number.isSafeInteger(value) && value >= field.min && value <= field.max ? value : refuse();
      }
      case 'number': {
        if (isOff) return undefined;
        const value = Number(text);
        return text !== '' && Number.isFinite(value) && value >= field.min && value <= field.max ? value : refuse();
      }
      case 'bytes':
        return this.#bytes(field, text) ?? refuse();
      case 'octal':
        return /^0?[0-7]{3}$/.test(text) ? parseInt(text, 8) : refuse();
      case 'boolean':
        return booleanOf(text) ?? refuse();
      case 'choice': {
        const value = text.toLowerCase();
        return field.values.includes(value) ? value : refuse();
      }
      case 'text':
        return this.#text(field, name, raw, text, fallback);
      case 'url':
        if (isOff) return undefined;
        return isHttpUrl(text) ? text : refuse();
      case 'list':
        return this.#list(field, name, raw, text, isOff);
      case 'integer-list': {
        if (isOff) return Object.freeze([]);
        const values = text.split(',').map((part) => Number(part.trim()));
        return values.every((v) => Number.isInteger(v) && v >= field.min && v <= field.max) ? Object.freeze(values) : refuse();
      }
    }
  }

  #bytes(field: ByteSizeField, text: string): number | undefined {
    const match = /^(\d+(?:\.\d+)?)\s*([a-zA-Z]*)$/.exec(text);
    const unit = match ? BYTE_UNITS[(match[2] ?? '').toLowerCase()] : undefined;
    const value = match && unit !== undefined ? Math.floor(Number(match[1]) * unit) : Number.NaN;
    return Number.isSafeInteger(value) && value >= field.min && value <= field.max ? value : undefined;
  }

  #text(field: TextField, name: string, raw: string, text: string, fallback: unknown): unknown {
    if (field.pattern !== undefined && !field.pattern.test(text)) {
      this.#problems.push({ name, value: raw, why: `must be ${field.patternText ?? `text matching ${String(field.pattern)}`}` });
      return fallback;
    }
    if (field.maxLength !== undefined && text.length > field.maxLength) {
      this.#problems.push({ name, value: raw, why: `must be at most ${field.maxLength} characters` });
      return fallback;
    }
    const problem = field.check?.(text);
    if (problem !== undefined) {
      this.#problems.push({ name, value: raw, why: problem });
      return fallback;
    }
    return text;
  }

  #list(field: ListField, name: string, raw: string, text: string, isOff: boolean): readonly string[] | undefined {
    if (isOff) return Object.freeze([]);
    const items = text.split(',').map((item) => item.trim()).filter((item) => item !== '');
    let valid = true;
    for (const item of items) {
      if (!field.item.test(item)) {
        this.#problems.push({ name, value: item, why: `entries must be ${field.itemText}` });
        valid = false;
      }
    }
    if (items.length < (field.minItems ?? 0)) {
      this.#problems.push({ name, value: raw, why: `must list at least ${field.minItems ?? 0} ${field.itemText}` });
      valid = false;
    }
    return valid ? Object.freeze(items) : frozen(field.default);
  }

  #secret(field: SecretField): Secret | undefined {
    const direct = this.#envValue(field.env);
    const file = this.#envValue(field.fileEnv);
    if (direct !== undefined && file !== undefined) {
      this.#problems.push({ name: field.env, why: `and ${field.fileEnv} are both set; set only one` });
      return undefined;
    }
    if (direct !== undefined) return new Secret(direct);
    if (file !== undefined) {
      const content = this.#readFile(field.fileEnv, file);
      return content === undefined ? undefined : new Secret(secretFileText(content));
    }
    return field.default === undefined ? undefined : new Secret(field.default);
  }

  #file(field: FileField): string | undefined {
    const path = this.#envValue(field.env);
    return path === undefined ? undefined : this.#readFile(field.env, path);
  }

  #readFile(name: string, path: string): string | undefined {
    try {
      return this.#readTextFile(path);
    } catch (error) {
      this.#problems.push({ name, value: path, why: `names a file that cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})` });
      return undefined;
    }
  }

  #family(field: FamilyField): readonly FamilyEntry[] {
    return Object.freeze(
      Object.entries(this.#env)
        .filter((entry): entry is [string, string] => entry[0].startsWith(field.prefix) && entry[1] !== undefined)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([env, value]) => Object.freeze({ env, name: env.slice(field.prefix.length).toLowerCase(), value })),
    );
  }
}

/** A default as the config holds it: a list is copied and frozen (the definitions' arrays are only readonly in type). */
function frozen<T>(value: T): T {
  return Array.isArray(value) ? (Object.freeze([...(value as unknown[])]) as T) : value;
}

function booleanOf(text: string): boolean | undefined {
  const lower = text.toLowerCase();
  if (TRUE_WORDS.includes(lower)) return true;
  if (FALSE_WORDS.includes(lower)) return false;
  return undefined;
}

function isHttpUrl(text: string): boolean {
  try {
    const scheme = new URL(text).protocol;
    return scheme === 'http:' || scheme === 'https:';
  } catch {
    return false;
  }
}


/**
 * A secret as held in a file: its text without the one trailing newline editors add.
 *
 * @example secretFileText('user:pass\n') // 'user:pass'
 */
export function secretFileText(content: string): string {
  return content.replace(/\r?\n$/, '');
}

/**
 * Reads a secret file again (WARPWATCH_INFLUX_TOKEN_FILE after InfluxDB refused the token): its
 * text as {@link secretFileText} takes it, kept a {@link Secret}.
 *
 * @throws the file system's error when the file cannot be read (e.g. ENOENT while it is being replaced)
 * @example readSecretFile('/run/secrets/influx-token').reveal() // 'user:pass'
 */
export function readSecretFile(path: string): Secret {
  return new Secret(secretFileText(readFileSync(path, 'utf8')));
}
