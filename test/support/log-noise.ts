/**
 * Log text for "no secret in the logs" checks, minus the values that are random or running
 * numbers: pino's time and pid, request ids, epochs, key fingerprints, counters. Those are
 * hex or digit strings that contain a 4-digit test PIN by chance now and then (an epoch
 * "…b7d222274a" contains "2222"), which made such checks fail about one run in twenty.
 * A PIN or password leaked into any OTHER field is still found.
 */
const NOISE_FIELDS = new Set(['time', 'pid', 'hostname', 'reqId', 'requestId', 'epoch', 'signer', 'seq', 'counter']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** JSON value without the noise fields (and without bare UUID strings). */
export function withoutNoise(value: unknown): string {
  return JSON.stringify(value, (k, v: unknown) => (NOISE_FIELDS.has(k) || (typeof v === 'string' && UUID.test(v)) ? undefined : v));
}

/** Newline-delimited JSON log text, line by line without the noise fields; other lines as they are. */
export function logTextWithoutNoise(text: string): string {
  return text
    .split('\n')
    .map((line) => {
      try {
        return withoutNoise(JSON.parse(line));
      } catch {
        return line;
      }
    })
    .join('\n');
}
