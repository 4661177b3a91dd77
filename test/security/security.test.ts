/**
 * Security checks of the running proxy (real sockets on 127.0.0.1):
 * - a token whose `aud` (or a 421 answer) names a host outside the allowlist never causes a
 *   connection to it — a listening TRAP server counts connections;
 * - header injection through the VIN or the command name is rejected and nothing leaves;
 * - bodies over the limit are refused before parsing (Content-Length or streamed);
 * - slowloris clients are cut by the server's timeouts;
 * - a debug-level log capture of a representative run contains no secret;
 * - the command key file with mode 0644 is refused;
 * - the TLS listener offers only TLS 1.2+.
 */
import { execFileSync } from 'node:child_process';
import { createServer as createHttpServer, type Server } from 'node:http';
import { connect as netConnect, createServer as createNetServer, type AddressInfo } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, type ProxyConfig } from '../../src/config.js';
import { CATALOGUE, StartupError, startProxy, type RunningProxy } from '../../src/cli/serve.js';
import { createLogger } from '../../src/log.js';
import { loadKeyFile } from '../../src/keys/index.js';
import { VcpError } from '../../src/protocol/errors.js';
import { toBase64 } from '../../src/protocol/routable.js';
import { fakeJwt, fleetVin, makeKeyFile, startStack, type KeyFile, type Stack } from '../faults/harness.js';

let keyFile: KeyFile;
beforeAll(async () => {
  keyFile = await makeKeyFile();
});
afterAll(async () => {
  await keyFile.cleanup();
});

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A TCP server that only counts connections (and answers nothing). */
async function trapServer(): Promise<{ port: number; connections: () => number; close(): Promise<void> }> {
  let n = 0;
  const s = createNetServer((sock) => {
    n++;
    sock.destroy();
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  return {
    port: (s.address() as AddressInfo).port,
    connections: () => n,
    close: () => new Promise<void>((r) => s.close(() => r())),
  };
}

async function proxyWith(args: string[], opts: Parameters<typeof startProxy>[1] = {}): Promise<RunningProxy> {
  const cfg = parseConfig(['--key', keyFile.path, '--port', '0', '--log-level', 'silent', ...args], {}) as ProxyConfig;
  // No start-up probe: the upstream counters below must only see forwarded traffic.
  const p = await startProxy(cfg, { metrics: null, probe: false, ...opts });
  cleanups.push(() => p.close());
  return p;
}

describe('upstream allowlist', () => {
  it('a token whose aud names a host outside the allowlist never causes a connection to it', async () => {
    const trap = await trapServer();
    cleanups.push(() => trap.close());
    const proxy = await proxyWith(['--allowed-upstreams', 'tesla.com,tesla.cn']);
    const auds: unknown[] = [
      `http://127.0.0.1:${trap.port}`,
      `https://127.0.0.1:${trap.port}`,
      `http://localhost:${trap.port}`,
      `https://tesla.com@127.0.0.1:${trap.port}`,
      `https://127.0.0.1:${trap.port}#.tesla.com`,
      `https://eviltesla.com:${trap.port}`,
      `https://tesla.com.127.0.0.1.nip.io:${trap.port}`,
      [`http://127.0.0.1:${trap.port}`, 'https://auth.tesla.com'],
      `127.0.0.1:${trap.port}`,
    ];
    for (const aud of auds) {
      const token = fakeJwt({ sub: 'attacker', aud });
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      const vin = fleetVin(0);
      const answers = await Promise.all([
        fetch(`${proxy.url}/api/1/vehicles/${vin}/command/flash_lights`, { method: 'POST', headers, body: '{}' }),
        fetch(`${proxy.url}/api/1/vehicles/${vin}/command/navigation_request`, { method: 'POST', headers, body: '{"type":"share_ext_content_raw","value":{"android.intent.extra.TEXT":"x"},"locale":"en-US","timestamp_ms":"1"}' }),
        fetch(`${proxy.url}/api/1/vehicles/${vin}/vehicle_data`, { headers }),
        fetch(`${proxy.url}/api/1/vehicles/fleet_telemetry_config`, { method: 'POST', headers, body: JSON.stringify({ vins: [vin], config: { hostname: 'x' } }) }),
      ]);
      for (const r of answers) {
        expect(r.status).toBe(403);
        expect(((await r.json()) as { error: string }).error).toBe('upstream_not_allowed');
      }
    }
    expect(trap.connections()).toBe(0);
  });

  it('a 421 naming a host outside the allowlist is not followed', async () => {
    const trap = await trapServer();
    cleanups.push(() => trap.close());
    let hits = 0;
    const regional: Server = createHttpServer((req, res) => {
      hits++;
      req.resume();
      res.writeHead(421, { 'content-type': 'application/json', 'alt-svc': `h2="https://127.0.0.1:${trap.port}"` });
      res.end(JSON.stringify({ response: null, error: `use base URL: http://127.0.0.1:${trap.port}`, error_description: '' }));
    });
    await new Promise<void>((r) => regional.listen(0, '127.0.0.1', () => r()));
    cleanups.push(() => new Promise<void>((r) => regional.close(() => r())));
    const port = (regional.address() as AddressInfo).port;
    const proxy = await proxyWith(['--allowed-upstreams', 'localhost']);
    const token = fakeJwt({ sub: 'u', aud: `http://localhost:${port}` });
    // undici.request, not fetch: fetch itself retries a 421 once on a new connection.
    const r = await request(`${proxy.url}/api/1/vehicles/${fleetVin(0)}/vehicle_data`, { headers: { authorization: `Bearer ${token}` } });
    expect(r.statusCode).toBe(421);
    await r.body.arrayBuffer();
    expect(hits).toBe(1);
    expect(trap.connections()).toBe(0);
  });
});

describe('header injection through the VIN or the command name', () => {
  it('is rejected and nothing is forwarded', async () => {
    let hits = 0;
    const upstream: Server = createHttpServer((req, res) => {
      hits++;
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"response":null}');
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
    cleanups.push(() => new Promise<void>((r) => upstream.close(() => r())));
    const proxy = await proxyWith(['--upstream', `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`]);
    const headers = { authorization: `Bearer ${fakeJwt()}`, 'content-type': 'application/json' };
    const good = fleetVin(0);
    const evil = [
      [`5YJ3E1EA8MF0000%0D%0AX-Injected:%201`, 'flash_lights'],
      [`${good}%0D%0AX-Injected:%201`, 'flash_lights'],
      [`${good}%0AHost:%20evil.example`, 'flash_lights'],
      [`${good}%20HTTP%2F1.1%0D%0AX:%201`, 'flash_lights'],
      [good, 'flash_lights%0D%0AX-Injected:%201'],
      [good, 'honk_horn%0AAuthorization:%20Bearer%20stolen'],
      [good, 'flash_lights%20HTTP%2F1.1'],
      [good, 'flash_lights%00'],
      [good, '..%2Fsigned_command'],
      [good, '%2E%2E%2Fwake_up'],
    ];
    for (const [vin, name] of evil) {
      const r = await fetch(`${proxy.url}/api/1/vehicles/${vin}/command/${name}`, { method: 'POST', headers, body: '{}' });
      expect([400, 404]).toContain(r.status);
      const body = (await r.json()) as { error: string; error_description: string };
      expect(body.error_description).not.toMatch(/X-Injected|stolen|evil\.example/);
      expect(r.headers.get('x-injected')).toBeNull();
    }
    expect(hits).toBe(0);

  });
});

describe('request bodies over the limit', () => {
  it('are refused before parsing: declared Content-Length and streamed bodies', async () => {
    let planned = 0;
    let hits = 0;
    const upstream: Server = createHttpServer((req, res) => {
      hits++;
      req.resume();
      res.writeHead(200).end('{}');
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
    cleanups.push(() => new Promise<void>((r) => upstream.close(() => r())));
    const proxy = await proxyWith(['--upstream', `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, '--max-body-bytes', '1024'], {
      catalogue: {
        planCommand: (name, body) => {
          planned++;
          return CATALOGUE.planCommand(name, body);
        },
        openApiDocument: () => CATALOGUE.openApiDocument(),
      },
    });
    const u = new URL(proxy.url);
    // Declared 50 MB, only a few bytes sent: the answer comes without waiting for the rest.
    const declared = await new Promise<string>((resolve) => {
      const s = netConnect(Number(u.port), u.hostname, () => {
        s.write(
          `POST /api/1/vehicles/${fleetVin(0)}/command/set_charge_limit HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${fakeJwt()}\r\n` +
            'Content-Type: application/json\r\nContent-Length: 52428800\r\n\r\n{"percent":',
        );
      });
      let out = '';
      s.on('data', (d) => {
        out += String(d);
        if (out.includes('\r\n\r\n') && out.includes('}')) s.destroy();
      });
      s.on('close', () => resolve(out));
    });
    expect(declared).toMatch(/^HTTP\/1\.1 413/);
    expect(declared).toContain('request_too_large');

    // Chunked, no Content-Length: cut while streaming.
    const big = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('{"percent": 80, "pad": "'));
        for (let i = 0; i < 64; i++) c.enqueue(new Uint8Array(1024).fill(0x61));
        c.enqueue(new TextEncoder().encode('"}'));
        c.close();
      },
    });
    const streamed = await fetch(`${proxy.url}/api/1/vehicles/${fleetVin(0)}/command/set_charge_limit`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fakeJwt()}`, 'content-type': 'application/json' },
      body: big,
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    // Pass-through routes obey the same limit.
    const pass = await fetch(`${proxy.url}/api/1/vehicles/fleet_status`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fakeJwt()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ vins: Array.from({ length: 200 }, (_, i) => fleetVin(i)) }),
    });
    expect(pass.status).toBe(413);
    expect(planned).toBe(0);
    expect(hits).toBe(0);
  });
});

describe('slowloris', () => {
  it('a client that trickles its headers (or its body) is cut by the server timeouts', async () => {
    const proxy = await proxyWith(['--upstream', 'http://127.0.0.1:9'], {
      serverTimeouts: { headersMs: 300, requestMs: 600, checkIntervalMs: 50 },
    });
    const u = new URL(proxy.url);
    const trickle = (first: string, more: string): Promise<{ closed: boolean; wrote: number }> =>
      new Promise((resolve) => {
        let wrote = 0;
        const s = netConnect(Number(u.port), u.hostname, () => s.write(first));
        // Bounded: at most 100 writes (10 s) — the server must cut us well before.
        const t = setInterval(() => {
          if (wrote++ >= 100) {
            clearInterval(t);
            s.destroy();
            resolve({ closed: false, wrote });
          } else s.write(more);
        }, 100);
        s.on('data', () => undefined);
        s.on('error', () => undefined);
        s.on('close', () => {
          clearInterval(t);
          resolve({ closed: wrote < 100, wrote });
        });
      });
    const headers = await trickle(`GET /api/1/vehicles HTTP/1.1\r\nHost: x\r\n`, 'X-Slow: 1\r\n');
    expect(headers.closed).toBe(true);
    const body = await trickle(
      `POST /api/1/vehicles/${fleetVin(0)}/command/set_charge_limit HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${fakeJwt()}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`,
      ' ',
    );
    expect(body.closed).toBe(true);
  });

  it('with the default settings the timeouts are checked often enough to matter', async () => {
    // Node only enforces headersTimeout/requestTimeout when its connection check runs
    // (every 30 s by default): a 10 s header limit would really be 10–40 s.
    const proxy = await proxyWith(['--upstream', 'http://127.0.0.1:9']);
    const server = proxy.server as unknown as { connectionsCheckingInterval: number; headersTimeout: number };
    expect(server.headersTimeout).toBeLessThanOrEqual(10_000);
    expect(server.connectionsCheckingInterval).toBeLessThanOrEqual(1_000);
  });
});

describe('secrets never reach the logs', () => {
  it('a debug-level capture of proxy + simulator traffic holds no token, PIN, password, private key or signed payload', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const logger = createLogger({ level: 'debug', destination: sink });
    const stack: Stack = await startStack({ tamper: true, logger, simLogger: logger, keyFile, timeout: '1s' });
    cleanups.push(() => stack.close());
    const vin = fleetVin(0);
    const PIN = '9173';
    const PASSWORD = 'Valet-Zq7-Secret';
    const calls: Array<[string, unknown]> = [
      ['flash_lights', {}],
      ['door_lock', {}],
      ['set_pin_to_drive', { on: true, password: PASSWORD }],
      ['set_valet_mode', { on: true, password: PIN }],
      ['set_valet_mode', { on: false, password: PIN }],
      ['speed_limit_activate', { pin: PIN }],
      ['speed_limit_deactivate', { pin: PIN }],
      ['speed_limit_deactivate', { pin: '0000' }],
      ['parental_controls_activate', { pin: PIN }],
      ['speed_limit_clear_pin', { pin: 'not-a-pin' }],
      ['set_charge_limit', `{"percent": 80, "pin": "${PIN}", "password": "${PASSWORD}"`], // bad JSON
      ['no_such_command', { pin: PIN }],
    ];
    for (const [name, body] of calls) await (await stack.cmd(name, vin, body)).arrayBuffer();
    // Failures that make the proxy log at warn/error: dropped answer, 5xx, a forged answer, a reboot.
    stack.sim.sim.inject({ kind: 'drop', holdMs: 10 }, vin);
    await (await stack.cmd('speed_limit_activate', vin, { pin: PIN })).arrayBuffer();
    stack.sim.sim.inject({ kind: 'fail', status: 503, error: 'x', description: 'y' }, vin);
    await (await stack.cmd('set_valet_mode', vin, { on: true, password: PIN })).arrayBuffer();
    stack.tamper!.next({ kind: 'rewrite', rewrite: () => '{"response":"AAAA"}' });
    await (await stack.cmd('set_pin_to_drive', vin, { on: true, password: PASSWORD })).arrayBuffer();
    stack.sim.sim.reboot(vin, 'both');
    await (await stack.cmd('door_unlock', vin)).arrayBuffer();
    await (await stack.cmd('flash_lights', vin)).arrayBuffer();
    stack.tamper!.next({ kind: 'hang_before' });
    await (await stack.cmd('honk_horn', vin)).arrayBuffer();
    await (
      await fetch(`${stack.proxy.url}/api/1/vehicles/fleet_telemetry_config`, {
        method: 'POST',
        headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ vins: [vin], config: { hostname: 'telemetry.example.com', fields: { BatteryLevel: { interval_seconds: 60 } } } }),
      })
    ).arrayBuffer();
    await (await fetch(`${stack.proxy.url}/api/1/vehicles/${vin}/vehicle_data`, { headers: { authorization: `Bearer ${stack.token}` } })).arrayBuffer();
    await (await fetch(`${stack.proxy.url}/api/1/vehicles`, { headers: { authorization: 'Bearer' } })).arrayBuffer();

    const log = lines.join('');
    expect(lines.length).toBeGreaterThan(10); // the capture really captured something
    const pemBody = keyFile.pem.split('\n').filter((l) => l && !l.startsWith('-----'));
    const secrets: Record<string, string[]> = {
      token: [stack.token, stack.token.split('.')[1]!],
      pin: [`"${PIN}"`, `=${PIN}`, `: ${PIN}`],
      password: [PASSWORD],
      privateKey: ['PRIVATE KEY', ...pemBody],
      signedPayload: stack.recorder.sent.length ? [] : ['<none recorded>'],
    };
    // Every signed message that left the proxy, as base64 and hex (and a 24-char slice of each).
    expect(stack.recorder.commandsSent().length).toBeGreaterThan(5);
    for (const msg of stack.recorder.rawBodies) {
      const b64 = toBase64(msg);
      secrets.signedPayload!.push(b64.slice(8, 40), Buffer.from(msg).toString('hex').slice(16, 80));
    }
    const found = Object.entries(secrets).flatMap(([kind, needles]) => needles.filter((n) => n.length >= 4 && log.includes(n)).map((n) => `${kind}: ${n.slice(0, 20)}`));
    expect(found).toEqual([]);
  }, 30_000);
});

describe('command key file permissions', () => {
  it('a key file with mode 0644 is refused at start-up', async () => {
    const loose = await makeKeyFile(0o644);
    cleanups.push(() => loose.cleanup());
    try {
      loadKeyFile(loose.path);
      expect.unreachable('loadKeyFile accepted a 0644 key');
    } catch (e) {
      expect(e).toBeInstanceOf(VcpError);
      expect((e as VcpError).code).toBe('key_insecure_permissions');
    }
    const cfg = parseConfig(['--key', loose.path, '--port', '0'], {}) as ProxyConfig;
    await expect(startProxy(cfg, { metrics: null })).rejects.toBeInstanceOf(StartupError);
    await expect(startProxy(cfg, { metrics: null })).rejects.toThrow(/permission|chmod|0?600/i);
    // The same key with 0600 starts.
    await writeFile(join(loose.dir, 'ok.pem'), loose.pem, { mode: 0o600 });
    const ok = await startProxy(parseConfig(['--key', join(loose.dir, 'ok.pem'), '--port', '0'], {}) as ProxyConfig, { metrics: null });
    await ok.close();
  });
});

describe('TLS', () => {
  it('offers only TLS 1.2 and later', async () => {
    const dir = keyFile.dir;
    const cert = join(dir, 'tls-cert.pem');
    const key = join(dir, 'tls-key.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1'], {
      stdio: 'ignore',
    });
    const proxy = await proxyWith(['--tls-cert', cert, '--tls-key', key, '--upstream', 'http://127.0.0.1:9']);
    expect(proxy.url.startsWith('https://')).toBe(true);
    const port = Number(new URL(proxy.url).port);
    const handshake = (minVersion: 'TLSv1' | 'TLSv1.2' | 'TLSv1.3', maxVersion: 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3'): Promise<string> =>
      new Promise((resolve) => {
        const s = tlsConnect({ host: '127.0.0.1', port, minVersion, maxVersion, rejectUnauthorized: false, ciphers: 'DEFAULT@SECLEVEL=0' });
        s.once('secureConnect', () => {
          resolve(s.getProtocol() ?? 'unknown');
          s.end();
        });
        s.once('error', (e: NodeJS.ErrnoException) => resolve(`error:${e.code ?? e.message}`));
      });
    expect(await handshake('TLSv1', 'TLSv1.1')).toMatch(/^error:/);
    expect(await handshake('TLSv1', 'TLSv1')).toMatch(/^error:/);
    expect(await handshake('TLSv1.2', 'TLSv1.2')).toBe('TLSv1.2');
    expect(await handshake('TLSv1.3', 'TLSv1.3')).toBe('TLSv1.3');

    // Control: this client CAN speak TLS 1.1 to a server that allows it, so the refusal above
    // is the proxy's doing, not the client's.
    const { createServer: createTlsServer } = await import('node:tls');
    const { readFileSync } = await import('node:fs');
    const lax = createTlsServer({ key: readFileSync(key), cert: readFileSync(cert), minVersion: 'TLSv1', ciphers: 'DEFAULT@SECLEVEL=0' }, (c) => c.end());
    await new Promise<void>((r) => lax.listen(0, '127.0.0.1', () => r()));
    const laxPort = (lax.address() as AddressInfo).port;
    const control = await new Promise<string>((resolve) => {
      const s = tlsConnect({ host: '127.0.0.1', port: laxPort, minVersion: 'TLSv1', maxVersion: 'TLSv1.1', rejectUnauthorized: false, ciphers: 'DEFAULT@SECLEVEL=0' });
      s.once('secureConnect', () => {
        resolve(s.getProtocol() ?? 'unknown');
        s.end();
      });
      s.once('error', (e: NodeJS.ErrnoException) => resolve(`error:${e.code ?? e.message}`));
    });
    await new Promise<void>((r) => lax.close(() => r()));
    expect(control).toBe('TLSv1.1');
  });
});
