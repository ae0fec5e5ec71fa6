/**
 * Names and identities shared by every folder (see docs/architecture.md): the stream identity
 * and its keys, the Kafka header names, the Kafka topics. Pure data and functions, no I/O.
 */
export { attributionFromHeaders, KAFKA_HEADERS, matchesStreamFilter, NIL_UUID, streamKeyOf, type StreamIdentity, type StreamKeyParts } from './stream-identity.ts';
export { TOPICS } from './topics.ts';
