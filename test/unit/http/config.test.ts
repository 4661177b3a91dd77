import { describe, expect, it } from 'vitest';
import { ConfigError, HELP_REQUESTED, parseConfig, isLoopbackHost, type ProxyConfig } from '../../../src/config.js';

function parse(args: string[], env: Record<string, string> = {}): ProxyConfig {
  const c = parseConfig(args, env);
  if (c === HELP_REQUESTED) throw new Error('unexpected help');
  return c;
}

describe('parseConfig', () => {
  it('applies defaults', () => {
    const c = parse(['--key', 'k.pem']);
    expect(c).toMatchObject({
      keyFile: 'k.pem',
      host: '127.0.0.1',
      port: 4443,
      timeoutMs: 10_000,
      logLevel: 'info',
      sessionCacheSize: 10_000,
      upstream: undefined,
      allowInsecureHttp: false,
    });
    expect(c.allowedUpstreams).toContain('tesla.com');
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('reads VCPROXY_* env and lets flags win', () => {
    const env = { VCPROXY_KEY: 'env.pem', VCPROXY_PORT: '9000', VCPROXY_TIMEOUT: '2.5', VCPROXY_UPSTREAM: 'http://127.0.0.1:8080/' };
    const c = parse(['--port=9001'], env);
    expect(c.keyFile).toBe('env.pem');
    expect(c.port).toBe(9001);
    expect(c.timeoutMs).toBe(2500);
    expect(c.upstream).toBe('http://127.0.0.1:8080');
  });

  it('parses durations with units and allowed-upstream lists', () => {
    const c = parse(['--key', 'k', '--timeout', '500ms', '--allowed-upstreams', ' .Example.COM, *.foo.org ,']);
    expect(c.timeoutMs).toBe(500);
    expect(c.allowedUpstreams).toEqual(['example.com', 'foo.org']);
  });

  it('returns HELP_REQUESTED for --help', () => {
    expect(parseConfig(['--help'], {})).toBe(HELP_REQUESTED);
  });

  const bad: Array<[string[], Record<string, string>, RegExp]> = [
    [[], {}, /missing --key/],
    [['--key'], {}, /needs a value/],
    [['--key', 'k', '--bogus'], {}, /unknown option "--bogus"/],
    [['--key', 'k', '--port', '70000'], {}, /--port must be between/],
    [['--key', 'k', '--port', 'abc'], {}, /--port must be a whole number/],
    [['--key', 'k', '--tls-cert', 'c.pem'], {}, /--tls-cert and --tls-key must be given together/],
    [['--key', 'k', '--host', '0.0.0.0'], {}, /refusing to serve plain HTTP/],
    [['--key', 'k', '--upstream', 'ftp://x'], {}, /http:\/\/ or https:\/\//],
    [['--key', 'k', '--upstream', 'https://x/api'], {}, /bare origin/],
    [['--key', 'k', '--upstream', 'not a url'], {}, /is not a URL/],
    [['--key', 'k', '--timeout', 'soon'], {}, /--timeout must be a duration/],
    [['--key', 'k', '--log-level', 'loud'], {}, /--log-level must be one of/],
    [['--key', 'k', '--allowed-upstreams', 'a/b'], {}, /not a host name suffix/],
    [['--key', 'k', '--allow-insecure-http=maybe'], {}, /expects true or false/],
  ];
  it.each(bad)('rejects %j with one clear message', (args, env, re) => {
    let err: unknown;
    try {
      parseConfig(args, env);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(re);
    expect((err as Error).message).not.toContain('\n');
  });

  it('allows non-loopback hosts with TLS or an explicit insecure opt-in', () => {
    expect(parse(['--key', 'k', '--host', '0.0.0.0', '--tls-cert', 'c', '--tls-key', 't']).tlsCert).toBe('c');
    expect(parse(['--key', 'k', '--host', '0.0.0.0', '--allow-insecure-http']).allowInsecureHttp).toBe(true);
    expect(parse(['--key', 'k', '--host', '0.0.0.0'], { VCPROXY_ALLOW_INSECURE_HTTP: '1' }).allowInsecureHttp).toBe(true);
  });

  it('knows loopback addresses', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]']) expect(isLoopbackHost(h)).toBe(true);
    for (const h of ['0.0.0.0', '10.0.0.1', '::', 'example.com', '128.0.0.1']) expect(isLoopbackHost(h)).toBe(false);
  });
});
