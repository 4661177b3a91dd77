/**
 * docker-compose.yml, checked without Docker: every service runs the image's real CLI with
 * arguments that CLI accepts, secrets are mounted read-only at the paths the image expects,
 * and the proxy's effective environment (image ENV + compose) is a valid configuration.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseConfig, HELP_REQUESTED } from '../../src/config.js';
import { parseSimArgs } from '../../src/cli/sim.js';
import { envPairs, execForm, findAll, last, parseDockerfile } from './container-dockerfile.js';

const root = resolve(import.meta.dirname, '../..');

interface Service {
  build?: string;
  image?: string;
  entrypoint?: string[];
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  user?: string;
  privileged?: boolean;
}

const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
};
const runtime = parseDockerfile(readFileSync(join(root, 'Dockerfile'), 'utf8')).stages.at(-1)!;
const imageEnv = Object.assign({}, ...findAll(runtime, 'ENV').map((i) => envPairs(i.args))) as Record<string, string>;
const imageEntrypoint = execForm(last(runtime, 'ENTRYPOINT')!.args)!;

describe('docker-compose.yml', () => {
  const { proxy, sandbox, backend } = compose.services;

  it('has the proxy, the sandbox and a backend', () => {
    expect(proxy).toBeDefined();
    expect(sandbox).toBeDefined();
    expect(backend).toBeDefined();
    expect(proxy!.build).toBe('.');
    expect(sandbox!.image).toBe(proxy!.image);
  });

  it('mounts the key and TLS files read-only at the paths the image reads', () => {
    const vols = proxy!.volumes ?? [];
    const target = (path: string) => vols.find((v) => v.split(':')[1] === path);
    for (const path of [imageEnv.VCPROXY_KEY!, imageEnv.VCPROXY_TLS_CERT!, imageEnv.VCPROXY_TLS_KEY!]) {
      expect(target(path), path).toMatch(/:ro$/);
    }
    // No service gets the private key except the proxy, and nobody runs privileged or as root.
    for (const [name, svc] of Object.entries(compose.services)) {
      if (name !== 'proxy') expect((svc.volumes ?? []).join(' ')).not.toContain('private-key');
      expect(svc.privileged).not.toBe(true);
      expect(svc.user ?? '').not.toMatch(/^(root|0)(:|$)/);
    }
  });

  it("the proxy's effective environment is a valid serve configuration", () => {
    expect(proxy!.entrypoint).toBeUndefined(); // the image's `vcproxy serve`
    const config = parseConfig(proxy!.command ?? [], { ...imageEnv, ...proxy!.environment });
    expect(config).not.toBe(HELP_REQUESTED);
    if (config === HELP_REQUESTED) return;
    expect(config).toMatchObject({
      keyFile: '/keys/private-key.pem',
      tlsCert: '/tls/cert.pem',
      tlsKey: '/tls/key.pem',
      host: '0.0.0.0',
      port: 4443,
      upstream: 'http://sandbox:4444',
    });
  });

  it('the sandbox runs `vcproxy sim` from the image with arguments it accepts, where the proxy points', () => {
    expect(sandbox!.entrypoint).toEqual([...imageEntrypoint.slice(0, 2), 'sim']);
    // parseSimArgs reads the enrolled key file: stand in the repository's example public
    // key for the mounted one.
    const args = (sandbox!.command ?? []).map((a) =>
      a === '/keys/public-key.pem' ? join(root, 'keys.example/public-key.pem') : a,
    );
    expect(args).toContain(join(root, 'keys.example/public-key.pem'));
    const opts = parseSimArgs(args);
    expect(opts).not.toBe('help');
    if (opts === 'help') return;
    expect(opts).toMatchObject({ host: '0.0.0.0', port: 4444 });
    // The proxy's public key (not the private one) is what the sandbox enrols.
    expect(sandbox!.volumes).toEqual(['./keys/public-key.pem:/keys/public-key.pem:ro']);
  });
});
