/**
 * What a Kafka authorization refusal means for an operator: which ACL the service lacks and
 * the command that grants it. The services know which call was refused (a produce, a fetch, a
 * join, a describeConfigs), so they name the operation; this module reads the refusal out of a
 * kafkajs error and writes the line (docs/security.md § Kafka ACLs lists every ACL).
 */
import type { KafkaSecurityConfig } from './kafka-security.ts';

/** The ACL resource types the services need. */
export type KafkaAclResourceType = 'Topic' | 'Group';

/** Operations the services use (Read and Write imply Describe on the same resource). */
export type KafkaAclOperation = 'Read' | 'Write' | 'Describe' | 'DescribeConfigs';

/** One ALLOW ACL a service needs. */
export interface KafkaAclNeed {
  readonly operation: KafkaAclOperation;
  readonly resourceType: KafkaAclResourceType;
  readonly name: string;
  /** `PREFIXED`: every resource whose name starts with `name` (the estimator's groups). Default `LITERAL`. */
  readonly pattern?: 'LITERAL' | 'PREFIXED';
}

const DENIAL_TYPES: Readonly<Record<string, 'Topic' | 'Group' | 'Cluster' | 'TransactionalId'>> = {
  TOPIC_AUTHORIZATION_FAILED: 'Topic',
  GROUP_AUTHORIZATION_FAILED: 'Group',
  CLUSTER_AUTHORIZATION_FAILED: 'Cluster',
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: 'TransactionalId',
};

/**
 * The resource type of a Kafka authorization refusal (TOPIC_/GROUP_/CLUSTER_/TRANSACTIONAL_ID_
 * AUTHORIZATION_FAILED) anywhere along kafkajs' `cause`/`originalError`/`errors` chain, or
 * undefined when the error is not one.
 *
 * @example kafkaAuthorizationDenial(Object.assign(new Error('Not authorized to access topics'), { type: 'TOPIC_AUTHORIZATION_FAILED' })); // 'Topic'
 */
export function kafkaAuthorizationDenial(error: unknown): 'Topic' | 'Group' | 'Cluster' | 'TransactionalId' | undefined {
  const pending: unknown[] = [error];
  for (let seen = 0; pending.length > 0 && seen < 32; seen++) {
    const e = pending.shift();
    if (typeof e !== 'object' || e === null) continue;
    const type = (e as { type?: unknown }).type;
    if (typeof type === 'string' && type in DENIAL_TYPES) return DENIAL_TYPES[type];
    const record = e as { cause?: unknown; originalError?: unknown; errors?: unknown };
    pending.push(record.cause, record.originalError);
    if (Array.isArray(record.errors)) pending.push(...record.errors);
  }
  return undefined;
}

/**
 * The principal the broker sees for this client: `User:<name>` with SASL; with a client
 * certificate and no SASL, the certificate's subject (as the broker's
 * `ssl.principal.mapping.rules` map it); else `User:ANONYMOUS`.
 *
 * @example kafkaPrincipalOf({ sasl: { mechanism: 'scram-sha-512', username: 'ww', password }, tls: undefined }); // 'User:ww'
 */
export function kafkaPrincipalOf(security: KafkaSecurityConfig): string {
  if (security.sasl !== undefined) return `User:${security.sasl.username}`;
  if (security.tls?.cert !== undefined) return "the client certificate's principal (User:<subject> after the broker's ssl.principal.mapping.rules)";
  return 'User:ANONYMOUS';
}

/**
 * The operator's line for ACLs a principal lacks: what each is and the `kafka-acls.sh` command
 * that grants it (to be run by whoever administers the cluster; the services never alter ACLs).
 *
 * @param principal - from {@link kafkaPrincipalOf}
 * @param needs - the ACLs the refused call needs (one or more)
 * @example missingAclText('User:c', [{ operation: 'Write', resourceType: 'Topic', name: 'warpwatch.frames' }])
 * // "User:c lacks ALLOW Write on Topic warpwatch.frames (docs/security.md § Kafka ACLs); grant: kafka-acls.sh --bootstrap-server <broker> --add --allow-principal User:c --operation Write --topic warpwatch.frames"
 */
export function missingAclText(principal: string, needs: readonly KafkaAclNeed[]): string {
  const what = needs.map((need) => `ALLOW ${need.operation} on ${need.resourceType} ${need.name}${need.pattern === 'PREFIXED' ? '* (prefixed)' : ''}`).join(' and ');
  const commandPrincipal = principal.startsWith('User:') ? principal : 'User:<subject>';
  const commands = needs.map(
    (need) =>
      `kafka-acls.sh --bootstrap-server <broker> --add --allow-principal ${commandPrincipal} --operation ${need.operation} --${need.resourceType === 'Topic' ? 'topic' : 'group'} ${need.name}${need.pattern === 'PREFIXED' ? ' --resource-pattern-type prefixed' : ''}`,
  );
  return `${principal} lacks ${what} (docs/security.md § Kafka ACLs); grant: ${commands.join('; ')}`;
}

/**
 * A refused Kafka call with the ACLs it needs (found by {@link kafkaAuthorizationDenial} and the
 * call's own knowledge, or by probing each topic: service/kafka-topics.ts ensureServiceTopics).
 * The services turn it into their WW_ERR_KAFKA_AUTHORIZATION line with {@link missingAclText}.
 */
export class KafkaAccessDenied extends Error {
  readonly needs: readonly KafkaAclNeed[];

  constructor(needs: readonly KafkaAclNeed[], cause: unknown) {
    super(`not authorized: needs ${needs.map((need) => `${need.operation} on ${need.resourceType} ${need.name}`).join(', ')}`, { cause });
    this.name = 'KafkaAccessDenied';
    this.needs = needs;
  }
}

/**
 * The refusal behind a consumer that kafkajs stopped for good (its crash with `restart: false`):
 * {@link kafkaAuthorizationDenial}, or 'Group' for kafkajs' KafkaJSGroupCoordinatorNotFound, which
 * kafkajs raises without the broker's answer when FindCoordinator is refused for good — what an
 * authorizer answers a principal that may not use the group. Only for consumers stopped for good:
 * during an outage kafkajs retries that error instead.
 *
 * @example stoppedConsumerDenial(Object.assign(new Error('Failed to find group coordinator'), { name: 'KafkaJSGroupCoordinatorNotFound' })); // 'Group'
 */
export function stoppedConsumerDenial(error: unknown): ReturnType<typeof kafkaAuthorizationDenial> {
  if (typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'KafkaJSGroupCoordinatorNotFound') return 'Group';
  return kafkaAuthorizationDenial(error);
}
