/**
 * Checks that a rendered InfluxQL query only names series the estimator writes: the
 * measurement after FROM, every double-quoted identifier (fields, tags, GROUP BY keys,
 * `WITH KEY = "..."`) and the `kind` values compared against. It parses the query text
 * (not the builder's structure), so it also catches names a future edit spells by hand.
 */
import { ALERT_KINDS, FIELDS, LABEL_TAGS, MEASUREMENTS, PIPELINE_SERVICES, TAGS } from '../contracts/index.ts';

const measurementKeyByName = new Map<string, keyof typeof FIELDS>(
  (Object.keys(MEASUREMENTS) as (keyof typeof MEASUREMENTS)[]).map((key) => [MEASUREMENTS[key], key]),
);
const tagNames = new Set<string>([...Object.values(TAGS), ...Object.values(LABEL_TAGS)]);
const literalValuesByTag = new Map<string, Set<string>>([
  [TAGS.kind, new Set<string>(Object.values(ALERT_KINDS))],
  [TAGS.service, new Set<string>(Object.values(PIPELINE_SERVICES))],
]);

/**
 * Lists every name in `query` the estimator does not write (empty when all are known).
 *
 * @example
 * findUnknownSeriesNames('SELECT mean("loss_predicted") FROM "warpwatch_window" WHERE $timeFilter'); // []
 * findUnknownSeriesNames('SELECT mean("loss") FROM "warpwatch_window"'); // ['field or tag "loss" of warpwatch_window']
 */
export function findUnknownSeriesNames(query: string): string[] {
  const problems: string[] = [];
  const from = /\bFROM\s+"((?:[^"\\]|\\.)*)"/i.exec(query);
  if (from === null) return [`no FROM "<measurement>" in query: ${query}`];
  const measurement = from[1] as string;
  const key = measurementKeyByName.get(measurement);
  if (key === undefined) return [`measurement "${measurement}"`];
  const fieldNames = new Set<string>(Object.values(FIELDS[key]));

  // Every "identifier" with its preceding keyword; aliases (after AS) name result columns.
  const identifier = /(\bAS\s+)?"((?:[^"\\]|\\.)*)"/gi;
  for (const match of query.matchAll(identifier)) {
    const name = match[2] as string;
    if (match[1] !== undefined || name === measurement) continue;
    if (!fieldNames.has(name) && !tagNames.has(name)) problems.push(`field or tag "${name}" of ${measurement}`);
  }
  // Literal comparisons: "tag" = 'value' must use a value the estimator writes.
  for (const match of query.matchAll(/"(\w+)"\s*(?:=|!=)\s*'((?:[^'\\]|\\.)*)'/g)) {
    const allowed = literalValuesByTag.get(match[1] as string);
    if (allowed !== undefined && !allowed.has(match[2] as string)) problems.push(`value '${match[2]}' of tag "${match[1]}"`);
  }
  return problems;
}
