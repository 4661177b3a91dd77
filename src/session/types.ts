/**
 * Types shared by the session layer and its callers.
 */
import type { DomainId } from '../protocol/domains.js';
import type { Route } from '../transport/upstream.js';
import type { UpstreamResponse } from '../transport/client.js';
import type { AbortLike } from '../transport/abort.js';

export interface SignedCommandRequest {
  vin: string;
  /** Catalogue name, for logs and errors only. */
  name: string;
  domain: DomainId;
  /** Encoded VCSEC.UnsignedMessage or CarServer.Action. */
  payload: Uint8Array;
  /** The client's own `Authorization` header, forwarded as is. */
  authorization: string;
  route: Route;
  /** Absolute deadline of the whole client request (ms, same clock as the dispatcher's). */
  deadline: number;
  /** Aborts when the client goes away; work not yet sent is cancelled. */
  signal?: AbortLike | undefined;
  /** Extra headers for upstream calls (e.g. X-Forwarded-For). */
  forwardHeaders?: Record<string, string> | undefined;
}

export type DispatchOutcome =
  /** The vehicle answered; shape it as `{"response":{"result","reason"}}`, status 200. */
  | { kind: 'result'; result: boolean; reason: string }
  /** The vehicle does not support signed commands: forward the original request to REST. */
  | { kind: 'unsupported' }
  /** Relay this upstream answer unchanged (401/403/412/429, other client errors). */
  | { kind: 'relay'; response: UpstreamResponse };

export interface CommandDispatcher {
  execute(req: SignedCommandRequest): Promise<DispatchOutcome>;
  /** True while a VIN is remembered as not supporting signed commands. */
  isUnsupported(vin: string): boolean;
}
