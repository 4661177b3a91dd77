/**
 * `vcproxy serve` configuration as an operator meets it: `--print-config` shows the merged
 * configuration (flag > VCPROXY_* > --config file) and exits 0 without starting; invalid
 * configuration stops start-up with ONE line on stderr and a non-zero exit.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig, type ProxyConfig } from '../../src/config.js';
import { startProxy } from '../../src/cli/serve.js';

const ROOT = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'vcproxy-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function serve(args: string[], env: Record<string, string> = {}): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('vcproxy serve configuration', () => {
  it('--print-config prints the merged configuration and exits 0', () => {
    const file = join(dir, 'proxy.yaml');
    writeFileSync(file, 'key: /keys/private-key.pem\nport: 9443\nlog-level: warn\nsession-cache-size: 5\n');
    const r = serve(['--config', file, '--port', '9444', '--print-config'], { VCPROXY_LOG_LEVEL: 'debug', VCPROXY_TIMEOUT: '3s' });
    expect(r.code, r.stderr).toBe(0);
    const cfg = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(cfg).toMatchObject({
      key: '/keys/private-key.pem', // the path is shown (it is not a secret; its contents are)
      port: 9444, // flag
      'log-level': 'debug', // environment over file
      timeout: '3000ms', // environment
      'session-cache-size': 5, // file
      'metrics-port': null,
    });
    expect(r.stderr).toBe('');
  }, 60_000);

  it('refuses an unknown config-file key with one line and exit 2', () => {
    const file = join(dir, 'typo.json');
    writeFileSync(file, JSON.stringify({ key: 'k.pem', 'log-levle': 'info' }));
    const r = serve(['--config', file]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^vcproxy serve: config file .*typo\.json: unknown key "log-levle"/);
  }, 60_000);

  it('refuses a bad value with one line and exit 2', () => {
    const r = serve(['--key', 'k.pem', '--print-config'], { VCPROXY_PORT: 'eighty' });
    expect(r.code).toBe(2);
    expect(r.stderr.trimEnd().split('\n')).toEqual(['vcproxy serve: --port must be a whole number, not "eighty"']);
  }, 60_000);

  it('a start-up failure (missing key file) is one line and exit 1', () => {
    const r = serve(['--key', join(dir, 'absent.pem'), '--port', '0']);
    expect(r.code).toBe(1);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^vcproxy serve: .*absent\.pem/);
  }, 60_000);
});

describe('a key mounted read-only for everyone (mode 0444, as many secret mounts are)', () => {
  const key = join(dir, 'mounted-key.pem');
  copyFileSync(join(ROOT, 'keys.example/private-key.pem'), key);
  chmodSync(key, 0o444);

  it('is refused by default, with a message naming the file and the fix', async () => {
    const cfg = parseConfig(['--port', '0'], { VCPROXY_KEY: key }) as ProxyConfig;
    await expect(startProxy(cfg, { probe: false })).rejects.toThrow(/readable by other users/);
  });

  it('starts with VCPROXY_ALLOW_INSECURE_KEY_PERMISSIONS=true (the README\'s documented path)', async () => {
    const cfg = parseConfig(['--port', '0'], { VCPROXY_KEY: key, VCPROXY_ALLOW_INSECURE_KEY_PERMISSIONS: 'true' }) as ProxyConfig;
    const proxy = await startProxy(cfg, { probe: false });
    try {
      expect((await fetch(`${proxy.url}/health`)).status).toBe(200);
    } finally {
      await proxy.close();
    }
  });
});
