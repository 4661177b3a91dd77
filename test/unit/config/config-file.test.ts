/**
 * Configuration sources and their precedence (flag > VCPROXY_* > --config file > default),
 * JSON and YAML files, the one-line errors, and `--print-config` masking.
 */
import { describe, expect, it } from 'vitest';
import {
  CONFIG_OPTIONS,
  ConfigError,
  HELP_REQUESTED,
  MASK,
  formatConfig,
  maskSecrets,
  parseConfig,
  type ProxyConfig,
} from '../../../src/config.js';

function parse(args: string[], env: Record<string, string> = {}, files: Record<string, string> = {}): ProxyConfig {
  const c = parseConfig(args, env, {
    readFile: (p) => {
      const t = files[p];
      if (t === undefined) throw Object.assign(new Error('nope'), { code: 'ENOENT' });
      return t;
    },
  });
  if (c === HELP_REQUESTED) throw new Error('unexpected help');
  return c;
}

function error(args: string[], env: Record<string, string> = {}, files: Record<string, string> = {}): string {
  try {
    parse(args, env, files);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    const msg = (e as Error).message;
    expect(msg).not.toContain('\n'); // one clear line
    return msg;
  }
  throw new Error('expected a ConfigError');
}

const YAML = `# proxy settings
key: /keys/private-key.pem
port: 9443
timeout: 5s
log-level: debug
allowed-upstreams:
  - example.com
  - example.org
metrics-port: 9100
shutdown-grace: 3s
`;

describe('--config file', () => {
  it('reads YAML with lists, durations and numbers', () => {
    const c = parse(['--config', 'p.yaml'], {}, { 'p.yaml': YAML });
    expect(c).toMatchObject({
      keyFile: '/keys/private-key.pem',
      port: 9443,
      timeoutMs: 5000,
      logLevel: 'debug',
      metricsPort: 9100,
      shutdownGraceMs: 3000,
      configFile: 'p.yaml',
    });
    expect(c.allowedUpstreams).toEqual(['example.com', 'example.org']);
  });

  it('reads JSON, and VCPROXY_CONFIG names the file too', () => {
    const json = JSON.stringify({ key: 'k.pem', port: 7000, 'allow-insecure-key-permissions': true });
    const c = parse([], { VCPROXY_CONFIG: 'c.json' }, { 'c.json': json });
    expect(c).toMatchObject({ keyFile: 'k.pem', port: 7000, allowInsecureKeyPermissions: true });
  });

  it('precedence: flag > environment > file > default', () => {
    const file = { 'p.yaml': 'key: file.pem\nport: 1111\nhost: 127.0.0.2\nlog-level: warn\n' };
    const c = parse(['--config', 'p.yaml', '--port', '3333'], { VCPROXY_PORT: '2222', VCPROXY_HOST: '127.0.0.3' }, file);
    expect(c.port).toBe(3333); // flag beats env and file
    expect(c.host).toBe('127.0.0.3'); // env beats file
    expect(c.logLevel).toBe('warn'); // file beats default
    expect(c.keyFile).toBe('file.pem');
    expect(c.timeoutMs).toBe(10_000); // default
  });

  it('an empty file is no settings', () => {
    expect(parse(['--key', 'k', '--config', 'e.yaml'], {}, { 'e.yaml': '' }).port).toBe(4443);
  });

  it('refuses unknown keys, naming the key and the known ones', () => {
    const msg = error(['--config', 'p.yaml'], {}, { 'p.yaml': 'key: k\nprot: 1\n' });
    expect(msg).toContain('unknown key "prot"');
    expect(msg).toContain('port');
  });

  it('refuses keys that only make sense on the command line', () => {
    expect(error(['--config', 'p.yaml'], {}, { 'p.yaml': 'key: k\nprint-config: true\n' })).toContain('unknown key "print-config"');
    expect(error(['--config', 'p.yaml'], {}, { 'p.yaml': 'key: k\nconfig: other.yaml\n' })).toContain('unknown key "config"');
  });

  it('reports bad values from the file like bad flags', () => {
    expect(error(['--config', 'p.yaml'], {}, { 'p.yaml': 'key: k\nport: 70000\n' })).toMatch(/--port must be between 0 and 65535/);
    expect(error(['--config', 'p.yaml'], {}, { 'p.yaml': 'key: k\nlog-level: loud\n' })).toMatch(/--log-level/);
    expect(error(['--config', 'p.yaml'], {}, { 'p.yaml': 'key: k\ntls-cert: {a: 1}\n' })).toMatch(/"tls-cert" must be a string/);
  });

  it('reports unreadable, unparsable and non-mapping files in one line', () => {
    expect(error(['--config', 'missing.yaml'])).toMatch(/cannot read --config missing.yaml \(ENOENT\)/);
    expect(error(['--config', 'bad.yaml'], {}, { 'bad.yaml': 'key: [unclosed\n  - x: {' })).toMatch(/neither valid JSON nor YAML/);
    expect(error(['--config', 'list.yaml'], {}, { 'list.yaml': '- a\n- b\n' })).toMatch(/must hold a mapping/);
  });

  it('validates the new options', () => {
    expect(error(['--key', 'k', '--metrics-port', '4443'])).toMatch(/--metrics-port must differ from --port/);
    expect(error(['--key', 'k', '--shutdown-grace', 'soon'])).toMatch(/--shutdown-grace must be a duration/);
    expect(parse(['--key', 'k', '--shutdown-grace', '0']).shutdownGraceMs).toBe(0);
    expect(parse(['--key', 'k']).metricsPort).toBeUndefined();
  });
});

describe('--print-config', () => {
  it('is parsed as a one-shot flag', () => {
    expect(parse(['--key', 'k', '--print-config']).printConfig).toBe(true);
    expect(parse(['--key', 'k']).printConfig).toBe(false);
  });

  it('prints every file key (so the output is itself a valid config file) and shows paths', () => {
    const c = parse(['--key', '/keys/private-key.pem', '--tls-cert', 'c.pem', '--tls-key', 't.pem', '--timeout', '2s']);
    const out = JSON.parse(formatConfig(c)) as Record<string, unknown>;
    const fileKeys = CONFIG_OPTIONS.filter((o) => o.fileKey !== '').map((o) => o.fileKey);
    expect(Object.keys(out).sort()).toEqual([...fileKeys].sort());
    expect(out['key']).toBe('/keys/private-key.pem');
    expect(out['tls-key']).toBe('t.pem');
    expect(out['timeout']).toBe('2000ms');
    // Round trip: the printed configuration parses back to the same configuration.
    const again = parse(['--config', 'printed.json'], {}, { 'printed.json': formatConfig(c) });
    expect({ ...again, configFile: undefined }).toEqual({ ...c, configFile: undefined });
  });

  it('masks secret-like values and URL credentials', () => {
    const masked = maskSecrets({
      keyFile: '/keys/k.pem',
      api_token: 'tok-123',
      nested: { password: 'hunter2', clientSecret: 's3', pin: '1234' },
      upstream: 'https://user:pa55@example.com',
      empty_token: '',
    }) as Record<string, unknown>;
    const text = JSON.stringify(masked);
    for (const s of ['tok-123', 'hunter2', 's3"', '1234', 'pa55']) expect(text).not.toContain(s);
    expect(masked['keyFile']).toBe('/keys/k.pem');
    expect(masked['api_token']).toBe(MASK);
    expect(masked['upstream']).toBe(`https://${MASK}@example.com`);
    expect(masked['empty_token']).toBe('');
  });
});

describe('CONFIG_OPTIONS', () => {
  it('lists every flag with a VCPROXY_ variable (except one-shot flags) and unique names', () => {
    const flags = CONFIG_OPTIONS.map((o) => o.flag);
    expect(new Set(flags).size).toBe(flags.length);
    for (const o of CONFIG_OPTIONS) {
      if (o.flag === '--help' || o.flag === '--print-config') expect(o.env).toBe('');
      else expect(o.env).toBe('VCPROXY_' + o.flag.slice(2).toUpperCase().replace(/-/g, '_'));
    }
  });
});
