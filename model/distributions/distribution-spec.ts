/**
 * The text syntax of distributions on the command line: `binom(N,p)`, `geo(p)`, `pois(lambda)`,
 * `unif(a,b)`, `nbinom(r,p)`, `cat(v:w,v:w,...)`.
 */
import { ModelError } from '../errors.ts';
import { validateFamilySpec, type FamilySpec } from './family.ts';

const SYNTAX = 'binom(N,p), geo(p), pois(lambda), unif(a,b), nbinom(r,p) or cat(v:w,v:w,...)';

function invalid(message: string): ModelError {
  return new ModelError('WW_ERR_MODEL_INVALID_SPEC', message);
}

function parseNumber(text: string, what: string, spec: string): number {
  const trimmed = text.trim();
  // Number('') is 0 and Number('0x10') is 16: accept plain decimal/scientific notation only.
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(trimmed)) {
    throw invalid(`${spec}: ${what} must be a number, got '${trimmed}'`);
  }
  return Number(trimmed);
}

/**
 * Parses a distribution spec; whitespace is ignored, family names are case-insensitive.
 * Parameters are checked against the family's domain (docs/model.md §2d).
 *
 * @throws {ModelError} WW_ERR_MODEL_INVALID_SPEC (a RangeError) naming what is wrong and the allowed syntax.
 * @example parseDistributionSpec('nbinom(5,0.3)') // { family: 'nbinom', r: 5, p: 0.3 }
 * @example parseDistributionSpec('cat(1:2,5:1)') // { family: 'cat', entries: [[1, 2], [5, 1]] }
 */
export function parseDistributionSpec(text: string): FamilySpec {
  const match = /^\s*([A-Za-z]+)\s*\((.*)\)\s*$/s.exec(text);
  if (match === null) throw invalid(`cannot read distribution '${text}'; expected ${SYNTAX}`);
  const family = match[1]!.toLowerCase();
  const body = match[2]!;
  const args = body.trim() === '' ? [] : body.split(',');
  const arity: Record<string, number> = { binom: 2, geo: 1, pois: 1, unif: 2, nbinom: 2 };
  const expectArgs = (names: string): void => {
    if (args.length !== arity[family]) {
      throw invalid(`${family}(${names}) takes ${arity[family]} parameter${arity[family] === 1 ? '' : 's'}, got ${args.length} in '${text.trim()}'`);
    }
  };
  let spec: FamilySpec;
  switch (family) {
    case 'binom':
      expectArgs('N,p');
      spec = { family, trials: parseNumber(args[0]!, 'N', 'binom(N,p)'), p: parseNumber(args[1]!, 'p', 'binom(N,p)') };
      break;
    case 'geo':
      expectArgs('p');
      spec = { family, p: parseNumber(args[0]!, 'p', 'geo(p)') };
      break;
    case 'pois':
      expectArgs('lambda');
      spec = { family, lambda: parseNumber(args[0]!, 'lambda', 'pois(lambda)') };
      break;
    case 'unif':
      expectArgs('a,b');
      spec = { family, low: parseNumber(args[0]!, 'a', 'unif(a,b)'), high: parseNumber(args[1]!, 'b', 'unif(a,b)') };
      break;
    case 'nbinom':
      expectArgs('r,p');
      spec = { family, r: parseNumber(args[0]!, 'r', 'nbinom(r,p)'), p: parseNumber(args[1]!, 'p', 'nbinom(r,p)') };
      break;
    case 'cat': {
      if (args.length === 0) throw invalid('cat(v:w,...): at least one value:weight entry is required, got none');
      const entries = args.map((entry): [number, number] => {
        const parts = entry.split(':');
        if (parts.length !== 2) throw invalid(`cat(v:w,...): each entry must be value:weight, got '${entry.trim()}'`);
        return [parseNumber(parts[0]!, 'value', 'cat(v:w,...)'), parseNumber(parts[1]!, 'weight', 'cat(v:w,...)')];
      });
      spec = { family, entries };
      break;
    }
    default:
      throw invalid(`unknown distribution family '${match[1]}'; expected ${SYNTAX}`);
  }
  validateFamilySpec(spec);
  return spec;
}
