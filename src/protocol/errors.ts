/**
 * The one error type every layer throws and every caller branches on.
 *
 * Callers decide by `code`, `mayHaveSucceeded` and `temporary` — never by message text.
 * `mayHaveSucceeded` is the safety bit: when true the vehicle may already have executed
 * the command, so nothing may re-send it automatically (honk twice is a bug).
 * Messages must never contain secrets (keys, tokens, PINs, passwords, signed payloads).
 */
export interface VcpErrorOptions {
  /** HTTP status the proxy answers with when this error reaches a client. */
  status?: number;
  /** The vehicle may have executed the command; never resend blindly. */
  mayHaveSucceeded?: boolean;
  /** Retrying later (or after a resync) can succeed. */
  temporary?: boolean;
  /** Field-level validation problems, in the service envelope's `messages` shape. */
  messages?: Record<string, string[]>;
  /** Extra headers for the HTTP answer (e.g. Retry-After). */
  headers?: Record<string, string>;
  cause?: unknown;
}

export class VcpError extends Error {
  override readonly name = 'VcpError';
  readonly code: string;
  readonly status: number;
  readonly mayHaveSucceeded: boolean;
  readonly temporary: boolean;
  readonly messages: Record<string, string[]> | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: string, message: string, opts: VcpErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = code;
    this.status = opts.status ?? 500;
    this.mayHaveSucceeded = opts.mayHaveSucceeded ?? false;
    this.temporary = opts.temporary ?? false;
    this.messages = opts.messages;
    this.headers = opts.headers;
  }

  /** The service's error envelope: {response, error, error_description, messages}. */
  toEnvelope(): ServiceEnvelope {
    return {
      response: null,
      error: this.code,
      error_description: this.message,
      ...(this.messages ? { messages: this.messages } : {}),
    };
  }
}

export interface ServiceEnvelope {
  response: unknown;
  error?: string;
  error_description?: string;
  messages?: Record<string, string[]>;
}

export function isVcpError(e: unknown): e is VcpError {
  return e instanceof VcpError;
}
