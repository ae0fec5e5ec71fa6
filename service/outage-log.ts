/**
 * Says a server outage once: the first failure of a streak is logged, the retries that
 * follow are not, until the server answers again (then one line says so, if asked).
 */

/** One server's outage state. */
export interface OutageLog {
  /** A failed attempt: logs `line` only when the server was not already known to be down. */
  failed(line: string): void;
  /** A successful attempt: ends the outage; logs `line` when one was going on. */
  recovered(line?: string): void;
  /** Whether an outage is going on (a failure since the last success). */
  readonly down: boolean;
}

/**
 * Creates the outage state of one server.
 *
 * @param log where the lines go
 * @example
 * const kafkaOutage = createOutageLog((line) => process.stderr.write(`${line}\n`));
 * kafkaOutage.failed('Kafka does not answer; retrying'); // logged
 * kafkaOutage.failed('Kafka does not answer; retrying'); // not logged
 * kafkaOutage.recovered('Kafka answers again');          // logged
 */
export function createOutageLog(log: (line: string) => void): OutageLog {
  let down = false;
  return {
    failed(line) {
      if (!down) log(line);
      down = true;
    },
    recovered(line) {
      if (down && line !== undefined) log(line);
      down = false;
    },
    get down() {
      return down;
    },
  };
}
