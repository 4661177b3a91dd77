/**
 * Header hygiene for forwarding. Hop-by-hop headers describe one connection and must not
 * be forwarded (RFC 9110 §7.6.1); `host` and `content-length` are recomputed by undici for
 * the upstream connection. undici also throws on some of these (`connection`, `upgrade`,
 * `expect`, `transfer-encoding`, `keep-alive`), so stripping them is required, not cosmetic.
 */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
  'host',
  'content-length',
  'http2-settings',
]);

export type HeaderMap = Record<string, string | string[] | undefined>;

/** Names listed in a Connection header are hop-by-hop for that message too. */
function connectionListed(connection: string | string[] | undefined): Set<string> | undefined {
  if (connection === undefined) return undefined;
  const joined = Array.isArray(connection) ? connection.join(',') : connection;
  const names = joined
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '');
  return names.length ? new Set(names) : undefined;
}

/** Copies `headers` (lower-case names) without hop-by-hop fields. */
export function stripHopByHop(headers: HeaderMap): Record<string, string | string[]> {
  const listed = connectionListed(headers['connection']);
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    const v = headers[name];
    if (v === undefined) continue;
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || listed?.has(lower)) continue;
    out[lower] = v;
  }
  return out;
}

/** Fetch-API `Headers` → plain lower-case record, skipping hop-by-hop fields. */
export function headersFromFetch(h: Headers): Record<string, string> {
  const listed = connectionListed(h.get('connection') ?? undefined);
  const out: Record<string, string> = {};
  h.forEach((value, name) => {
    if (HOP_BY_HOP.has(name) || listed?.has(name)) return;
    out[name] = value;
  });
  return out;
}

/** Appends the client address to X-Forwarded-For, flattening earlier values. */
export function appendForwardedFor(headers: Record<string, string | string[]>, clientIp: string | undefined): void {
  if (!clientIp) return;
  const prev = headers['x-forwarded-for'];
  // Plain concatenation for the usual none-or-one earlier value (runs on every signed command).
  headers['x-forwarded-for'] =
    prev === undefined ? clientIp : Array.isArray(prev) ? [...prev, clientIp].join(', ') : `${prev}, ${clientIp}`;
}
