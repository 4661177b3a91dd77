/**
 * Upstream choice: which service origin a request goes to.
 *
 * 1. `--upstream` fixes the origin for every request.
 * 2. Otherwise the bearer token's `aud` claim names it. The JWT is decoded WITHOUT
 *    verification (the proxy is not the token's audience and has no key to verify it); this
 *    is safe only because the host must match `--allowed-upstreams`, so a forged token can
 *    at worst pick another allowlisted region — never send the client's token elsewhere.
 * 3. A 421 answer naming another host (`use base URL: https://HOST` in the body or
 *    `Alt-Svc: h2=https://HOST`) re-routes that token subject, again allowlisted only, and
 *    is remembered (bounded) so later requests go straight there.
 */
import { createHash } from 'node:crypto';
import { VcpError } from '../protocol/errors.js';
import { LruMap } from './lru.js';

export interface RouterOptions {
  fixed?: string | undefined;
  allowed: readonly string[];
  /** Token subjects whose 421 re-route is remembered. */
  rememberLimit?: number;
}

export interface Route {
  origin: string;
  /** Stable key for the token's holder: JWT `sub`, else a hash of the token. */
  subject: string;
}

interface TokenInfo {
  subject: string;
  /** Origin named by an allowlisted `aud`, if any. */
  audOrigin: string | undefined;
  /** Hosts named by `aud` (for the error message when none is allowed). */
  audHosts: string[];
  isJwt: boolean;
}

/** Host-suffix match at a label boundary: "tesla.com" matches "a.tesla.com", not "eviltesla.com". */
export function hostAllowed(host: string, allowed: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  for (const s of allowed) {
    if (h === s || h.endsWith('.' + s)) return true;
  }
  return false;
}

/** Decodes a JWT's payload (URL-safe base64, padding optional) without verifying it. */
export function decodeJwtPayload(token: string): Record<string, unknown> | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts[1]) return undefined;
  if (!/^[A-Za-z0-9_-]+={0,2}$/.test(parts[1])) return undefined;
  try {
    const json: unknown = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    return json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Extracts the token from `Authorization: Bearer <token>`; undefined when absent. */
export function bearerToken(authorization: string | undefined | null): string | undefined {
  if (!authorization) return undefined;
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization);
  return m?.[1];
}

function parseOrigin(value: string): URL | undefined {
  try {
    const u = new URL(value.includes('://') ? value : `https://${value}`);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') return undefined;
    return u;
  } catch {
    return undefined;
  }
}

const BASE_URL_RE = /use base URL: (https?):\/\/([A-Za-z0-9.-]+(?::\d{1,5})?)/;
const ALT_SVC_RE = /h2=["]?https:\/\/([A-Za-z0-9.-]+(?::\d{1,5})?)/;

export class UpstreamRouter {
  private readonly fixed: string | undefined;
  private readonly allowed: readonly string[];
  private readonly rerouted: LruMap<string, string>;
  /** Decoded-token cache: clients reuse one token for many requests. */
  private readonly tokens = new LruMap<string, TokenInfo>(4096);

  constructor(opts: RouterOptions) {
    this.fixed = opts.fixed;
    this.allowed = opts.allowed;
    this.rerouted = new LruMap(opts.rememberLimit ?? 10_000);
  }

  isAllowedOrigin(origin: string): boolean {
    const u = parseOrigin(origin);
    return u !== undefined && hostAllowed(u.hostname, this.allowed);
  }

  private info(token: string): TokenInfo {
    let info = this.tokens.get(token);
    if (info) return info;
    const payload = decodeJwtPayload(token);
    const sub = payload?.['sub'];
    const subject =
      typeof sub === 'string' && sub !== '' ? `sub:${sub}` : `tok:${createHash('sha256').update(token).digest('base64url').slice(0, 22)}`;
    const audRaw = payload?.['aud'];
    const auds = typeof audRaw === 'string' ? [audRaw] : Array.isArray(audRaw) ? audRaw.filter((a): a is string => typeof a === 'string') : [];
    let audOrigin: string | undefined;
    const audHosts: string[] = [];
    for (const a of auds) {
      const u = parseOrigin(a);
      if (!u) continue;
      // The authorization server is an audience too; it never serves the API.
      if (u.hostname.startsWith('auth.')) continue;
      audHosts.push(u.hostname);
      if (!audOrigin && hostAllowed(u.hostname, this.allowed)) audOrigin = u.origin;
    }
    info = { subject, audOrigin, audHosts, isJwt: payload !== undefined };
    this.tokens.set(token, info);
    return info;
  }

  /** Chooses the origin for this token or throws a VcpError; never returns a non-allowed host. */
  resolve(token: string): Route {
    const info = this.info(token);
    const remembered = this.rerouted.size ? this.rerouted.get(info.subject) : undefined;
    if (remembered) return { origin: remembered, subject: info.subject };
    if (this.fixed) return { origin: this.fixed, subject: info.subject };
    if (info.audOrigin) return { origin: info.audOrigin, subject: info.subject };
    if (!info.isJwt) {
      throw new VcpError(
        'invalid_token',
        'The bearer token is not a JWT, so its audience cannot choose the upstream; nothing was forwarded. Use a service access token or start the proxy with --upstream.',
        { status: 401 },
      );
    }
    const named = info.audHosts.length ? ` (${info.audHosts.join(', ')})` : '';
    throw new VcpError(
      'upstream_not_allowed',
      `The token's audience${named} is not an allowed upstream; nothing was forwarded. Add its host suffix to --allowed-upstreams or use --upstream.`,
      { status: 403 },
    );
  }

  /**
   * Handles a 421: returns the new origin to resend to when the answer names an allowlisted
   * host different from `current`, and remembers it for this subject; otherwise undefined.
   * Never downgrades https to http.
   */
  reroute(subject: string, current: string, headers: Record<string, string | string[] | undefined>, body: Buffer): string | undefined {
    let target: string | undefined;
    const m = BASE_URL_RE.exec(body.subarray(0, 4096).toString('utf8'));
    if (m) target = `${m[1]}://${m[2]}`;
    if (!target) {
      const alt = headers['alt-svc'];
      for (const v of Array.isArray(alt) ? alt : alt ? [alt] : []) {
        const a = ALT_SVC_RE.exec(v);
        if (a) {
          target = `https://${a[1]}`;
          break;
        }
      }
    }
    if (!target) return undefined;
    const u = parseOrigin(target);
    if (!u || !hostAllowed(u.hostname, this.allowed)) return undefined;
    if (current.startsWith('https:') && u.protocol !== 'https:') return undefined;
    if (u.origin === current) return undefined;
    this.rerouted.set(subject, u.origin);
    return u.origin;
  }
}
