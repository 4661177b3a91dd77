/**
 * Benchmark child: the BASELINE — the least a forwarding proxy can do. A plain node:http
 * server that forwards method, path, headers (minus hop-by-hop) and body to the upstream
 * through an undici `Pool` (same connection count as the proxy's default), buffers the
 * answer and relays status, content type and body. No parsing, no signing, no sessions.
 * Usage: baseline-server.ts <upstreamUrl>
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { serveParent } from './common.js';

const upstream = process.argv[2]!;
const pool = new Pool(upstream, { connections: 128, pipelining: 1, keepAliveTimeout: 30_000 });
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host', 'content-length', 'upgrade', 'expect', 'te', 'trailer']);

function readAll(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

const server = createServer(async (req, res) => {
  try {
    const body = await readAll(req);
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP.has(k)) headers[k] = v;
    const up = await pool.request({
      method: req.method as 'POST',
      path: req.url ?? '/',
      headers,
      body: body.length ? body : null,
    });
    const answer = Buffer.from(await up.body.arrayBuffer());
    const ct = up.headers['content-type'];
    res.writeHead(up.statusCode, { 'content-type': typeof ct === 'string' ? ct : 'application/json', 'content-length': answer.length });
    res.end(answer);
  } catch {
    res.writeHead(502).end();
  }
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  serveParent({ url: `http://127.0.0.1:${port}` }, async (m) => {
    if (m.cmd === 'stop') {
      server.close();
      server.closeAllConnections();
      await pool.close();
      setImmediate(() => process.exit(0));
      return {};
    }
    throw new Error(`unknown command ${String(m.cmd)}`);
  });
});
