/**
 * THE table that turns an upstream HTTP status into what the proxy does with it.
 * Every branch on upstream status in the proxy goes through `classifyStatus`, so the
 * safety rule "never resend after an answer that may mean the vehicle executed the
 * command" lives in exactly one place.
 */

export type UpstreamClass =
  /** 2xx: the upstream processed the request. */
  | 'ok'
  /** 401/403/412 and other 4xx: the client's problem; relay status and body unchanged. */
  | 'client_error'
  /** 408: vehicle asleep or offline; nothing was executed. */
  | 'asleep'
  /** 429: rate limited; relay with Retry-After / RateLimit-Reset. */
  | 'rate_limited'
  /** 421: wrong regional upstream; may re-route to an allowlisted host and resend. */
  | 'misdirected'
  /** 422 on signed_command: the vehicle does not support signed commands; use REST. */
  | 'unsupported_signed'
  /** 5xx: the upstream or vehicle failed somewhere after receiving the command. */
  | 'may_have_executed';

export type Endpoint = 'signed_command' | 'rest';

/** Explicit entries; ranges are handled below. */
const TABLE: Readonly<Record<number, UpstreamClass>> = {
  401: 'client_error',
  403: 'client_error',
  408: 'asleep',
  412: 'client_error',
  421: 'misdirected',
  429: 'rate_limited',
};

export function classifyStatus(status: number, endpoint: Endpoint): UpstreamClass {
  if (status >= 200 && status < 300) return 'ok';
  if (status === 422 && endpoint === 'signed_command') return 'unsupported_signed';
  const fixed = TABLE[status];
  if (fixed) return fixed;
  if (status >= 400 && status < 500) return 'client_error';
  // 1xx/3xx are not expected from a JSON API; treat them like 5xx: we cannot tell what
  // happened to the command, so it must not be resent.
  return 'may_have_executed';
}

/**
 * Client status when a command's fate is unknown: a timeout stays a timeout (504),
 * everything else becomes 503, matching the service's meanings for those codes.
 */
export function ambiguousStatus(upstreamStatus: number | 'timeout' | 'connection_lost'): 503 | 504 {
  return upstreamStatus === 'timeout' || upstreamStatus === 504 ? 504 : 503;
}
