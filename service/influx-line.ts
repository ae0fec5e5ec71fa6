/** One point as both services write it to InfluxDB. Numeric fields are written as floats, so a field never changes type. */
export interface InfluxPoint {
  readonly measurement: string;
  /** Tags with an empty value are left out. */
  readonly tags: Readonly<Record<string, string>>;
  readonly fields: Readonly<Record<string, number | string>>;
  /** Milliseconds since the Unix epoch. */
  readonly timestampMillis: number;
}

/**
 * InfluxDB line protocol of a point, timestamp in milliseconds (write precision `ms`).
 * Escaping per the line-protocol reference: measurement `,` and space; tag keys/values and
 * field keys `,` `=` space; string field values `"` and `\`.
 *
 * @example
 * encodeLineProtocol(point); // 'warpwatch_window,stream=a/b,... loss_predicted=1.2 1700000000000'
 */
export function encodeLineProtocol(point: InfluxPoint): string {
  const escapeMeasurement = (text: string): string => text.replace(/[, ]/g, (c) => `\\${c}`);
  const escapeKey = (text: string): string => text.replace(/[,= ]/g, (c) => `\\${c}`);
  const tagParts = Object.keys(point.tags)
    .sort()
    .filter((key) => point.tags[key] !== '')
    .map((key) => `${escapeKey(key)}=${escapeKey(point.tags[key] ?? '')}`);
  const fieldParts = Object.entries(point.fields).map(([key, value]) =>
    typeof value === 'number'
      ? `${escapeKey(key)}=${formatFloat(value)}`
      : `${escapeKey(key)}="${value.replace(/["\\]/g, (c) => `\\${c}`)}"`,
  );
  const head = [escapeMeasurement(point.measurement), ...tagParts].join(',');
  return `${head} ${fieldParts.join(',')} ${Math.round(point.timestampMillis)}`;
}

function formatFloat(value: number): string {
  // Integers are written with a decimal point so InfluxDB types the field as float, never int.
  const text = String(value);
  return /^-?\d+$/.test(text) ? `${text}.0` : text;
}
