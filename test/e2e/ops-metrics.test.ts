/**
 * `/metrics` after real traffic against the simulator: commands by name and outcome,
 * handshakes and resyncs by domain, upstream latency, REST fallbacks, 429 answers, in-flight
 * and session-cache gauges. And `--metrics-port`: metrics move to their own listener and the
 * API port stops exposing them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, type ProxyConfig } from '../../src/config.js';
import { startProxy } from '../../src/cli/serve.js';
import { loadKeyFile } from '../../src/keys/index.js';
import { startSim, DEFAULT_FLEET_VINS } from '../../src/sim/index.js';
import { exampleKeyFile, fakeJwt } from './proxy-fake-upstream.js';

const VIN: string = DEFAULT_FLEET_VINS.modern;
const AUTH = { authorization: `Bearer ${fakeJwt({ sub: 'metrics-user' })}`, 'content-type': 'application/json' };
let keyFile: { path: string; cleanup(): Promise<void> };
let publicKey: Uint8Array;
beforeAll(async () => {
  keyFile = await exampleKeyFile();
  publicKey = loadKeyFile(keyFile.path).publicKey;
});
afterAll(async () => {
  await keyFile.cleanup();
});

/** The value of one sample line, e.g. `vcproxy_commands_total{command="door_lock",outcome="ok"}`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('metrics', () => {
  it('exposes the counters after a few commands', async () => {
    const sim = await startSim({ port: 0, enroll: [{ publicKey, role: 'owner' }], timeScale: 1000, limits: false });
    const cfg = parseConfig(['--key', keyFile.path, '--port', '0', '--upstream', sim.url], {}) as ProxyConfig;
    const proxy = await startProxy(cfg, { probe: false, sleep: async () => undefined });
    const cmd = (name: string, body?: unknown, vin = VIN): Promise<Response> =>
      fetch(`${proxy.url}/api/1/vehicles/${vin}/command/${name}`, {
        method: 'POST',
        headers: AUTH,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    try {
      expect((await cmd('door_lock')).status).toBe(200);
      expect((await cmd('door_unlock')).status).toBe(200);
      expect((await cmd('honk_horn')).status).toBe(200);
      expect((await cmd('set_charge_limit', { percent: 'x' })).status).toBe(400);
      await fetch(`${sim.url}/_sim/reboot`, { method: 'POST', body: JSON.stringify({ vin: VIN, domain: 'infotainment' }) });
      expect((await cmd('flash_lights')).status).toBe(200);
      // A vehicle without signed-command support: the command goes to the REST endpoint.
      expect((await cmd('door_lock', undefined, DEFAULT_FLEET_VINS.legacy)).status).toBe(200);
      // The service's rate limit answer is counted.
      await fetch(`${sim.url}/_sim/fail_next`, { method: 'POST', body: JSON.stringify({ vin: VIN, status: 429 }) });
      expect((await fetch(`${proxy.url}/api/1/vehicles/${VIN}/vehicle_data`, { headers: AUTH })).status).toBe(429);

      const res = await fetch(`${proxy.url}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      const text = await res.text();
      expect(sample(text, 'vcproxy_commands_total{command="door_lock",outcome="ok"}')).toBe(2);
      expect(sample(text, 'vcproxy_commands_total{command="door_unlock",outcome="ok"}')).toBe(1);
      expect(sample(text, 'vcproxy_commands_total{command="set_charge_limit",outcome="invalid_request"}')).toBe(1);
      // One per vehicle: the modern car, and the legacy car's attempt that earned the 422.
      expect(sample(text, 'vcproxy_handshakes_total{domain="vehicle_security"}')).toBe(2);
      expect(sample(text, 'vcproxy_handshakes_total{domain="infotainment"}')).toBe(1);
      expect(sample(text, 'vcproxy_resyncs_total{domain="infotainment"}')).toBe(1);
      expect(sample(text, 'vcproxy_rest_fallbacks_total{command="door_lock"}')).toBe(1);
      expect(sample(text, 'vcproxy_rate_limited_total')).toBe(1);
      expect(sample(text, 'vcproxy_session_cache_size')).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'vcproxy_inflight_requests')).toBe(1); // the scrape itself
      expect(sample(text, 'vcproxy_upstream_request_duration_seconds_count{route="signed_command",status_class="2xx"}')).toBeGreaterThanOrEqual(5);
      expect(text).toMatch(/vcproxy_process_resident_memory_bytes/);
      expect(text).not.toContain(VIN);
    } finally {
      await proxy.close();
      await sim.close();
    }
  });

  it('--metrics-port serves /metrics, /health and /ready separately; the API port then answers 404 on /metrics', async () => {
    const sim = await startSim({ port: 0, enroll: [{ publicKey, role: 'owner' }], timeScale: 1000, limits: false });
    const cfg = parseConfig(['--key', keyFile.path, '--port', '0', '--metrics-port', '0', '--upstream', sim.url], {}) as ProxyConfig;
    const proxy = await startProxy(cfg, { probe: false, sleep: async () => undefined });
    try {
      expect(proxy.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(proxy.metricsUrl).not.toBe(proxy.url);
      const r = await fetch(`${proxy.url}/api/1/vehicles/${VIN}/command/door_lock`, { method: 'POST', headers: AUTH });
      expect(r.status).toBe(200);
      const api = await fetch(`${proxy.url}/metrics`, { headers: AUTH });
      expect(api.status).toBe(404);
      const apiText = await api.text();
      expect(apiText).not.toContain('vcproxy_');
      // The proxy's own answer (not forwarded upstream as an unknown path).
      expect(apiText).toContain('--metrics-port');
      const m = await fetch(`${proxy.metricsUrl!}/metrics`);
      expect(m.status).toBe(200);
      expect(sample(await m.text(), 'vcproxy_commands_total{command="door_lock",outcome="ok"}')).toBe(1);
      expect((await fetch(`${proxy.metricsUrl!}/health`)).status).toBe(200);
      expect((await fetch(`${proxy.metricsUrl!}/ready`)).status).toBe(200);
      expect((await fetch(`${proxy.url}/health`)).status).toBe(200);
    } finally {
      await proxy.close();
      await sim.close();
    }
  });
});
