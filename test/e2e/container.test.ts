/**
 * The container image, tested without a Docker engine: the Dockerfile's invariants
 * (non-root, no secrets baked in, health check, entrypoint), and the entrypoint command run
 * from a fresh build exactly as the image runs it.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envPairs, execForm, findAll, last, parseDockerfile, type Stage } from './container-dockerfile.js';
import { hasOpenssl, tryConnect } from '../support/net.js';

const root = resolve(import.meta.dirname, '../..');
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
const parsed = parseDockerfile(dockerfile);
const runtime = parsed.stages[parsed.stages.length - 1]!;
const build = parsed.stages[0]!;

function runtimeEnv(stage: Stage): Record<string, string> {
  return Object.assign({}, ...findAll(stage, 'ENV').map((i) => envPairs(i.args))) as Record<string, string>;
}

describe('Dockerfile', () => {
  it('is multi-stage: a build stage and a separate runtime stage on a node 20 base', () => {
    expect(parsed.stages.length).toBeGreaterThanOrEqual(2);
    expect(build.name).toBe('build');
    expect(runtime.name).toBe('runtime');
    const nodeVersion = parsed.preamble.find((i) => i.keyword === 'ARG' && i.args.startsWith('NODE_VERSION='));
    expect(nodeVersion?.args).toBe('NODE_VERSION=20');
    expect(runtime.base).toMatch(/^node:\$\{NODE_VERSION\}-(alpine|slim|bookworm-slim)$/);
    const buildRuns = findAll(build, 'RUN').map((i) => i.args).join('\n');
    expect(buildRuns).toMatch(/npm ci/);
    expect(buildRuns).toMatch(/npm run build/);
    expect(buildRuns).toMatch(/npm prune --omit=dev/);
  });

  it('runs as a non-root numeric user in the runtime stage', () => {
    const user = last(runtime, 'USER');
    expect(user).toBeDefined();
    const [uid, gid] = user!.args.split(':');
    expect(uid).toMatch(/^\d+$/);
    expect(Number(uid)).not.toBe(0);
    if (gid !== undefined) expect(Number(gid)).not.toBe(0);
    // Nothing after USER may switch back to root.
    const afterUser = runtime.instructions.filter((i) => i.line > user!.line);
    expect(afterUser.some((i) => i.keyword === 'USER')).toBe(false);
  });

  it('copies only build output, production node_modules, package.json and bin/ into the runtime', () => {
    const copies = findAll(runtime, 'COPY');
    expect(findAll(runtime, 'ADD')).toEqual([]);
    const sources = copies.map((c) => {
      expect(c.args).toMatch(/^--from=build\s/);
      return c.args.replace(/^--from=build\s+/, '').split(/\s+/)[0];
    });
    expect(sources.sort()).toEqual(['/src/bin', '/src/dist', '/src/node_modules', '/src/package.json']);
  });

  it('never copies key or TLS material into any stage', () => {
    for (const stage of parsed.stages) {
      for (const ins of [...findAll(stage, 'COPY'), ...findAll(stage, 'ADD')]) {
        expect(ins.args).not.toMatch(/\.pem|\.key\b|keys|tls|\.sandbox/i);
        // Copying the whole context would pull keys in if .dockerignore ever slipped.
        expect(ins.args).not.toMatch(/^\.\s|^\.\/?\s/);
      }
    }
  });

  it('reads the key and TLS files from documented mount paths through VCPROXY_* variables', () => {
    const env = runtimeEnv(runtime);
    expect(env).toMatchObject({
      NODE_ENV: 'production',
      VCPROXY_KEY: '/keys/private-key.pem',
      VCPROXY_TLS_CERT: '/tls/cert.pem',
      VCPROXY_TLS_KEY: '/tls/key.pem',
      VCPROXY_HOST: '0.0.0.0',
    });
    expect(dockerfile).toMatch(/\/keys\/private-key\.pem\s+the command private key/);
  });

  it('sets only VCPROXY_* variables the serve configuration knows', async () => {
    const { configUsage } = await import('../../src/config.js');
    const usage = configUsage();
    for (const name of Object.keys(runtimeEnv(runtime)).filter((n) => n.startsWith('VCPROXY_'))) {
      expect(usage, `${name} is not a serve option`).toContain(`[${name}]`);
    }
  });

  it('has a HEALTHCHECK that probes /health with node (no curl in the image)', () => {
    const hc = last(runtime, 'HEALTHCHECK');
    expect(hc).toBeDefined();
    const cmd = execForm(hc!.args.replace(/^(--\S+\s+)*CMD\s+/, ''));
    expect(cmd?.[0]).toBe('node');
    expect(cmd?.[1]).toBe('-e');
    expect(cmd?.[2]).toContain("path:'/health'");
  });

  it('starts `vcproxy serve` from the build output', () => {
    const entry = execForm(last(runtime, 'ENTRYPOINT')!.args);
    expect(entry).toEqual(['node', 'dist/cli.js', 'serve']);
    expect(last(runtime, 'WORKDIR')?.args).toBe('/app');
    // dist/cli.js is what tsconfig.build.json makes of src/cli.ts (rootDir src, outDir dist).
    const buildConfig = JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8')) as {
      compilerOptions: { rootDir: string; outDir: string };
    };
    expect(buildConfig.compilerOptions).toMatchObject({ rootDir: 'src', outDir: 'dist' });
    expect(existsSync(join(root, 'src/cli.ts'))).toBe(true);
    expect(readFileSync(join(root, 'src/cli.ts'), 'utf8')).toMatch(/\bserve:\s*\{/);
  });
});

/** Runs the image's HEALTHCHECK command with the given environment; resolves its exit code. */
function runHealthcheck(env: NodeJS.ProcessEnv): Promise<number | null> {
  const hc = execForm(last(runtime, 'HEALTHCHECK')!.args.replace(/^(--\S+\s+)*CMD\s+/, ''))!;
  return new Promise((r) => {
    // cwd is the repository: its package.json says "type": "module", as /app's does.
    const p = spawn(hc[0]!, hc.slice(1), { cwd: root, env: { PATH: process.env.PATH, ...env }, stdio: 'ignore' });
    p.once('exit', (code) => r(code));
  });
}

/** A throwaway self-signed P-256 certificate for localhost, like a mounted /tls. */
function makeTls(dir: string): { cert: string; key: string } {
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1',
    '-subj', '/CN=localhost', '-keyout', key, '-out', cert,
  ], { stdio: 'ignore' });
  return { cert, key };
}

describe('HEALTHCHECK command', () => {
  async function stub(status: number, tls?: { cert: string; key: string }): Promise<{ port: number; close: () => void }> {
    const handler = (req: IncomingMessage, res: ServerResponse): void => {
      res.statusCode = req.url === '/health' ? status : 404;
      res.end('ok');
    };
    const server = tls
      ? createHttpsServer({ cert: readFileSync(tls.cert), key: readFileSync(tls.key) }, handler)
      : createServer(handler);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { port: (server.address() as AddressInfo).port, close: () => server.close() };
  }

  it('succeeds on 200 from /health and fails on 503 or no listener (plain HTTP)', async () => {
    const ok = await stub(200);
    expect(await runHealthcheck({ VCPROXY_PORT: String(ok.port), VCPROXY_TLS_CERT: '' })).toBe(0);
    ok.close();
    const bad = await stub(503);
    expect(await runHealthcheck({ VCPROXY_PORT: String(bad.port), VCPROXY_TLS_CERT: '' })).toBe(1);
    bad.close();
    await new Promise<void>((r) => setImmediate(r));
    expect(await runHealthcheck({ VCPROXY_PORT: String(ok.port), VCPROXY_TLS_CERT: '' })).toBe(1);
  });

  it.skipIf(!hasOpenssl())('speaks TLS when VCPROXY_TLS_CERT is set (self-signed accepted on loopback)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vcproxy-tls-'));
    try {
      const tls = makeTls(dir);
      const ok = await stub(200, tls);
      expect(await runHealthcheck({ VCPROXY_PORT: String(ok.port), VCPROXY_TLS_CERT: tls.cert })).toBe(0);
      ok.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('.dockerignore', () => {
  const ignore = readFileSync(join(root, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));

  it('keeps keys, local state, dependencies and tests out of the build context', () => {
    for (const p of ['**/*.pem', 'keys/', 'keys.example/', '.sandbox/', 'node_modules/', 'test/', '.env', '.git/']) {
      expect(ignore).toContain(p);
    }
  });

  it('does not exclude anything the build stage copies', () => {
    for (const c of findAll(build, 'COPY')) {
      const srcs = c.args.split(/\s+/).slice(0, -1);
      for (const s of srcs) expect(ignore).not.toContain(s);
    }
  });
});

// ---------------------------------------------------------------------------------------
// The entrypoint, run for real from a fresh build.

const servePlaceholder = /not implemented yet/.test(readFileSync(join(root, 'src/cli/serve.ts'), 'utf8'));

describe.skipIf(servePlaceholder)('container entrypoint from a fresh build', () => {
  let app: string;
  let child: ChildProcess | undefined;

  beforeAll(() => {
    // Reproduce the image's build stage in a scratch directory (not the shared dist/):
    // the same files the Dockerfile copies, then `npm run build`.
    app = mkdtempSync(join(tmpdir(), 'vcproxy-image-'));
    for (const f of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json']) {
      copyFileSync(join(root, f), join(app, f));
    }
    for (const d of ['scripts', 'proto', 'src', 'bin']) cpSync(join(root, d), join(app, d), { recursive: true });
    symlinkSync(join(root, 'node_modules'), join(app, 'node_modules'), 'dir');
    execFileSync('npm', ['run', 'build'], { cwd: app, stdio: 'pipe' });
    // The runtime image has no src/: remove it so nothing can fall back to the sources.
    rmSync(join(app, 'src'), { recursive: true });
  }, 120_000);

  afterAll(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    if (app) rmSync(app, { recursive: true, force: true });
  });

  interface Started {
    child: ChildProcess;
    port: number;
    env: NodeJS.ProcessEnv;
    exited: Promise<number | null>;
    output: () => string;
    cleanup: () => void;
  }

  /** Runs the image's ENTRYPOINT from the scratch build with the image's ENV plus `extra`. */
  async function startEntrypoint(opts: { tls: boolean; extra?: NodeJS.ProcessEnv }): Promise<Started> {
    expect(existsSync(join(app, 'dist/cli.js'))).toBe(true);
    const mounts = mkdtempSync(join(tmpdir(), 'vcproxy-mounts-'));
    // The "mounted" key: the throwaway example key, owner-only as the proxy requires.
    const key = join(mounts, 'private-key.pem');
    copyFileSync(join(root, 'keys.example/private-key.pem'), key);
    chmodSync(key, 0o600);
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      ...runtimeEnv(runtime),
      VCPROXY_KEY: key,
      VCPROXY_HOST: '127.0.0.1',
      VCPROXY_PORT: '0',
      VCPROXY_LOG_LEVEL: 'info',
      VCPROXY_TLS_CERT: '',
      VCPROXY_TLS_KEY: '',
      ...opts.extra,
    };
    if (opts.tls) {
      const tls = makeTls(mounts);
      env.VCPROXY_TLS_CERT = tls.cert;
      env.VCPROXY_TLS_KEY = tls.key;
    }

    const [cmd, ...cmdArgs] = execForm(last(runtime, 'ENTRYPOINT')!.args)!;
    const proc = spawn(cmd!, cmdArgs, { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    let output = '';
    proc.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    proc.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));

    // Wait for the listening line that carries the bound port (bounded by the test timeout).
    const port = await new Promise<number>((resolvePort, reject) => {
      const look = (): void => {
        const m = /(?:127\.0\.0\.1|localhost):(\d{2,5})/.exec(output);
        if (m) resolvePort(Number(m[1]));
      };
      proc.stdout!.on('data', look);
      proc.stderr!.on('data', look);
      void exited.then((code) => reject(new Error(`serve exited early (${code}): ${output}`)));
    });
    return { child: proc, port, env, exited, output: () => output, cleanup: () => rmSync(mounts, { recursive: true, force: true }) };
  }

  it('serves /health over the mounted TLS files, passes the image HEALTHCHECK, and exits 0 on SIGTERM', async () => {
    const s = await startEntrypoint({ tls: hasOpenssl() });
    try {
      // The image's own HEALTHCHECK command, run with the container's environment.
      expect(await runHealthcheck({ ...s.env, VCPROXY_PORT: String(s.port) }), s.output()).toBe(0);
      s.child.kill('SIGTERM');
      expect(await s.exited, s.output()).toBe(0);
    } finally {
      s.cleanup();
    }
  }, 60_000);

  it('SIGTERM lets an in-flight request finish, refuses new connections, then exits 0', async () => {
    // A slow upstream that holds the request until the test releases it.
    let entered!: () => void;
    const reachedUpstream = new Promise<void>((r) => (entered = r));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const upstreamServer = createServer((_req, res) => {
      entered();
      void gate.then(() => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ response: [], count: 0 }));
      });
    });
    await new Promise<void>((r) => upstreamServer.listen(0, '127.0.0.1', r));
    const upstreamPort = (upstreamServer.address() as AddressInfo).port;
    const s = await startEntrypoint({ tls: false, extra: { VCPROXY_UPSTREAM: `http://127.0.0.1:${upstreamPort}` } });
    try {
      const answer = new Promise<{ status: number; body: string }>((resolveAnswer, reject) => {
        const r = httpRequest(
          { host: '127.0.0.1', port: s.port, path: '/api/1/products', headers: { authorization: 'Bearer test-token' }, agent: false },
          (res) => {
            let body = '';
            res.on('data', (d: Buffer) => (body += d.toString()));
            res.on('end', () => resolveAnswer({ status: res.statusCode ?? 0, body }));
          },
        );
        r.on('error', reject);
        r.end();
      });
      await reachedUpstream;
      s.child.kill('SIGTERM');
      // The listener closes once the signal is handled; poll (bounded) until it refuses.
      let refused = false;
      for (let i = 0; i < 200 && !refused; i++) {
        refused = (await tryConnect(s.port)) === 'ECONNREFUSED';
        if (!refused) await new Promise((r) => setTimeout(r, 10));
      }
      expect(refused, s.output()).toBe(true);
      expect(s.child.exitCode).toBeNull(); // still draining the in-flight request
      release();
      expect(await answer).toEqual({ status: 200, body: JSON.stringify({ response: [], count: 0 }) });
      expect(await s.exited, s.output()).toBe(0);
    } finally {
      release();
      upstreamServer.closeAllConnections();
      upstreamServer.close();
      s.cleanup();
    }
  }, 60_000);
});
