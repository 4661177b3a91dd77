import { describe, expect, it } from 'vitest';
import { BoundedLabel, OTHER, createMetrics, statusClass } from '../../../src/ops/metrics.js';

/** The value of one sample line (`name{labels} value`) in exposition text, or undefined. */
function sample(text: string, series: string): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith(series + ' ')) return Number(line.slice(series.length + 1));
  }
  return undefined;
}

describe('createMetrics', () => {
  it('exposes command, handshake, resync, fallback and rate-limit counters after some calls', async () => {
    const m = createMetrics({ commandNames: ['honk_horn', 'door_lock', 'flash_lights'] });
    m.commandDone('honk_horn', 'ok');
    m.commandDone('honk_horn', 'ok');
    m.commandDone('door_lock', 'vehicle_offline');
    m.handshake(2);
    m.handshake('infotainment');
    m.handshake(3);
    m.resync(3);
    m.restFallback('flash_lights');
    m.rateLimited();
    m.rateLimited();

    const { contentType, body } = await m.render();
    expect(contentType).toMatch(/^text\/plain/);
    expect(sample(body, 'vcproxy_commands_total{command="honk_horn",outcome="ok"}')).toBe(2);
    expect(sample(body, 'vcproxy_commands_total{command="door_lock",outcome="vehicle_offline"}')).toBe(1);
    expect(sample(body, 'vcproxy_handshakes_total{domain="vehicle_security"}')).toBe(1);
    expect(sample(body, 'vcproxy_handshakes_total{domain="infotainment"}')).toBe(2);
    expect(sample(body, 'vcproxy_resyncs_total{domain="infotainment"}')).toBe(1);
    expect(sample(body, 'vcproxy_rest_fallbacks_total{command="flash_lights"}')).toBe(1);
    expect(sample(body, 'vcproxy_rate_limited_total')).toBe(2);
    expect(body).toContain('# TYPE vcproxy_commands_total counter');
  });

  it('records upstream latency by route class and status class', async () => {
    const m = createMetrics({ latencyBuckets: [0.1, 1] });
    m.upstream('signed_command', 200, 0.05);
    m.upstream('signed_command', 204, 0.5);
    m.upstream('signed_command', 0, 2);
    m.upstream('rest_command', 429, 0.01);
    m.upstream('signed_command', 200, Number.NaN); // ignored
    const { body } = await m.render();
    const h = 'vcproxy_upstream_request_duration_seconds';
    expect(sample(body, `${h}_bucket{le="0.1",route="signed_command",status_class="2xx"}`)).toBe(1);
    expect(sample(body, `${h}_bucket{le="1",route="signed_command",status_class="2xx"}`)).toBe(2);
    expect(sample(body, `${h}_count{route="signed_command",status_class="2xx"}`)).toBe(2);
    expect(sample(body, `${h}_count{route="signed_command",status_class="error"}`)).toBe(1);
    expect(sample(body, `${h}_count{route="rest_command",status_class="4xx"}`)).toBe(1);
    expect(sample(body, `${h}_sum{route="signed_command",status_class="2xx"}`)).toBeCloseTo(0.55);
  });

  it('tracks in-flight requests and reads the session cache size at scrape time', async () => {
    const m = createMetrics();
    let size = 3;
    m.setSessionCacheSizeSource(() => size);
    m.inflight.inc();
    m.inflight.inc();
    m.inflight.dec();
    let { body } = await m.render();
    expect(sample(body, 'vcproxy_inflight_requests')).toBe(1);
    expect(sample(body, 'vcproxy_session_cache_size')).toBe(3);
    size = 7;
    ({ body } = await m.render());
    expect(sample(body, 'vcproxy_session_cache_size')).toBe(7);
  });

  it('keeps scraping when the session cache size source throws', async () => {
    const m = createMetrics();
    m.setSessionCacheSizeSource(() => {
      throw new Error('store down');
    });
    m.rateLimited();
    const { body } = await m.render();
    expect(sample(body, 'vcproxy_rate_limited_total')).toBe(1);
  });

  it('folds unknown command names and hostile label values into "other"', async () => {
    const m = createMetrics({ commandNames: ['honk_horn'] });
    for (let i = 0; i < 50; i++) m.commandDone(`made_up_${i}`, 'ok');
    m.commandDone('honk_horn"} 1\nfake_metric{a="', 'ok');
    m.restFallback('not_a_command');
    m.handshake(99);
    const { body } = await m.render();
    expect(sample(body, 'vcproxy_commands_total{command="other",outcome="ok"}')).toBe(51);
    expect(body).not.toContain('made_up_');
    expect(body).not.toContain('fake_metric');
    expect(sample(body, 'vcproxy_rest_fallbacks_total{command="other"}')).toBe(1);
    expect(sample(body, 'vcproxy_handshakes_total{domain="other"}')).toBe(1);
  });

  it('keeps separate registries per instance', async () => {
    const a = createMetrics();
    const b = createMetrics();
    a.rateLimited();
    expect(sample((await a.render()).body, 'vcproxy_rate_limited_total')).toBe(1);
    expect(sample((await b.render()).body, 'vcproxy_rate_limited_total')).toBe(0);
  });

  it('can add process metrics and serve a web Response', async () => {
    const m = createMetrics({ processMetrics: true });
    const { response } = m; // unbound on purpose: usable directly as a handler
    const res = await response();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toContain('vcproxy_process_cpu_user_seconds_total');
    expect(text).toContain('vcproxy_inflight_requests');
  });
});

describe('BoundedLabel', () => {
  it('passes allow-listed values only', () => {
    const l = new BoundedLabel(new Set(['a_b']), 10);
    expect(l.value('a_b')).toBe('a_b');
    expect(l.value('c')).toBe(OTHER);
  });

  it('without an allow-list keeps the first N well-formed values', () => {
    const l = new BoundedLabel(undefined, 2);
    expect(l.value('one')).toBe('one');
    expect(l.value('Bad Value')).toBe(OTHER);
    expect(l.value('two')).toBe('two');
    expect(l.value('three')).toBe(OTHER);
    expect(l.value('one')).toBe('one');
  });
});

describe('statusClass', () => {
  it('maps statuses to classes', () => {
    expect(statusClass(200)).toBe('2xx');
    expect(statusClass(421)).toBe('4xx');
    expect(statusClass(503)).toBe('5xx');
    expect(statusClass(0)).toBe('error');
    expect(statusClass(600)).toBe('error');
  });
});
