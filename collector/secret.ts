// The collector's credentials type is the services' one (service/secret.ts); re-exported here
// for the collector's own modules.
export { Secret } from '../service/index.ts';
