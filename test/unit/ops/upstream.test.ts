import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../../src/ops/metrics.js';
import { instrumentUpstream, routeClass } from '../../../src/ops/upstream.js';
import type { Upstream, UpstreamRequest } from '../../../src/transport/client.js';

function req(path: string): UpstreamRequest {
  return { origin: 'https://fleet.example.com', method: 'POST', path, headers: {}, deadline: 0 };
}

describe('routeClass', () => {
  it('maps paths to a fixed set of classes without VINs', () => {
    expect(routeClass('/api/1/vehicles/5YJ3E1EA1KF000001/signed_command')).toBe('signed_command');
    expect(routeClass('/api/1/vehicles/5YJ3E1EA1KF000001/wake_up')).toBe('wake_up');
    expect(routeClass('/api/1/vehicles/5YJ3E1EA1KF000001/command/navigation_request')).toBe('rest_command');
    expect(routeClass('/api/1/vehicles/fleet_telemetry_config_jws')).toBe('telemetry_config');
    expect(routeClass('/api/1/vehicles/5YJ3E1EA1KF000001/vehicle_data?endpoints=location_data')).toBe('vehicle_data');
    expect(routeClass('/api/1/products')).toBe('passthrough');
  });

  it('property: agrees with the regular-expression definition of each class on any path', () => {
    const byRegex = (path: string): string => {
      const p = path.split('?')[0] ?? '';
      if (/\/signed_command$/.test(p)) return 'signed_command';
      if (/\/wake_up$/.test(p)) return 'wake_up';
      if (/\/command\/[^/]+$/.test(p)) return 'rest_command';
      if (/\/fleet_telemetry_config(_jws)?$/.test(p)) return 'telemetry_config';
      if (/\/vehicle_data$/.test(p)) return 'vehicle_data';
      return 'passthrough';
    };
    const piece = fc.constantFrom('/', '?', 'command', 'signed_command', 'wake_up', 'fleet_telemetry_config', '_jws', 'vehicle_data', 'x', 'api', '1');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 8 }), (parts) => {
        const path = parts.join('');
        expect(routeClass(path)).toBe(byRegex(path));
      }),
      { numRuns: 5000 },
    );
  });
});

describe('instrumentUpstream', () => {
  it('times answers and failures by route class and status class', async () => {
    let t = 0;
    const inner: Upstream = {
      async request(r) {
        t += 250;
        if (r.path.endsWith('/wake_up')) throw new Error('connect ECONNREFUSED');
        return { status: r.path.endsWith('signed_command') ? 200 : 429, headers: {}, body: Buffer.from('') };
      },
      close: async () => undefined,
    };
    const metrics = createMetrics();
    const up = instrumentUpstream(inner, metrics, { now: () => t });
    expect((await up.request(req('/api/1/vehicles/V/signed_command'))).status).toBe(200);
    expect((await up.request(req('/api/1/vehicles/V/command/remote_boombox'))).status).toBe(429);
    await expect(up.request(req('/api/1/vehicles/V/wake_up'))).rejects.toThrow('ECONNREFUSED');
    const body = (await metrics.render()).body;
    const h = 'vcproxy_upstream_request_duration_seconds';
    expect(body).toContain(`${h}_count{route="signed_command",status_class="2xx"} 1`);
    expect(body).toContain(`${h}_sum{route="signed_command",status_class="2xx"} 0.25`);
    expect(body).toContain(`${h}_count{route="rest_command",status_class="4xx"} 1`);
    expect(body).toContain(`${h}_count{route="wake_up",status_class="error"} 1`);
  });
});
