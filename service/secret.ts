import { inspect } from 'node:util';

/**
 * A credential (SASL password, TLS private key, InfluxDB token) that never appears in logs: `toString`,
 * `toJSON` and `util.inspect` print `[redacted]`; only {@link Secret.reveal} returns the value.
 *
 * @example
 * const password = new Secret('hunter2');
 * `${password}` // '[redacted]'
 * password.reveal() // 'hunter2'
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  /** The secret value itself; pass it only to the client library that needs it. */
  reveal(): string {
    return this.#value;
  }

  /**
   * Whether both hold the same value, compared without revealing it to the caller.
   *
   * @example new Secret('a').equals(new Secret('a')) // true
   */
  equals(other: Secret): boolean {
    return this.#value === other.#value;
  }

  toString(): string {
    return '[redacted]';
  }

  toJSON(): string {
    return '[redacted]';
  }

  [inspect.custom](): string {
    return '[redacted]';
  }
}
