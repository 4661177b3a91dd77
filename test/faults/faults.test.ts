/**
 * Fault suite: the proxy in front of the simulator (and, where the simulator cannot
 * misbehave on its own, a tampering HTTP hop) under reboots, lost answers, upstream errors,
 * resets, timeouts, rate limits, malformed answers, slow peers and bursts.
 *
 * Every scenario asserts three things: what the client sees; that nothing was executed
 * twice (the simulator's log: no two executed entries with the same vin/channel/epoch/
 * signer/counter, and per-scenario execution counts); and that no counter was reused (every
 * signed message that left the proxy, decoded by the recording upstream).
 */
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { UniversalMessage } from '../../src/protocol/pb.js';
import { fromBase64, toBase64 } from '../../src/protocol/routable.js';
import {
  envelope,
  expectNoCounterReuse,
  expectNothingExecutedTwice,
  fleetVin,
  startStack as startStackRaw,
  testFleet,
  type Stack,
} from './harness.js';

// Every scenario runs with proxy and simulator logging at debug level into one capture;
// after the suite, the capture must hold no bearer token, private key or signed payload.
const captured: string[] = [];
const logger = createLogger({
  level: 'debug',
  destination: new Writable({
    write(chunk, _enc, cb) {
      captured.push(String(chunk));
      cb();
    },
  }),
});
const secrets = new Set<string>();

let stack: Stack | undefined;
afterEach(async () => {
  if (stack) {
    secrets.add(stack.token);
    for (const line of stack.keyFile.pem.split('\n')) if (line && !line.startsWith('-----')) secrets.add(line);
    for (const msg of stack.recorder.rawBodies) secrets.add(toBase64(msg).slice(8, 40));
  }
  await stack?.close();
  stack = undefined;
});

afterAll(() => {
  const log = captured.join('');
  expect(captured.length).toBeGreaterThan(100);
  expect(log).not.toContain('PRIVATE KEY');
  expect([...secrets].filter((s) => s.length >= 16 && log.includes(s)).map((s) => s.slice(0, 12))).toEqual([]);
});

/** startStack with the suite's debug-level log capture. */
const startStack = (o: Parameters<typeof startStackRaw>[0] = {}): ReturnType<typeof startStackRaw> => startStackRaw({ logger, simLogger: logger, ...o });

const OK = { response: { result: true, reason: '' } };

function checkInvariants(s: Stack): void {
  expectNothingExecutedTwice(s.sim.sim.log());
  expectNoCounterReuse(s.recorder);
}

async function warm(s: Stack, vin: string, name = 'flash_lights'): Promise<void> {
  const r = await envelope(await s.cmd(name, vin));
  expect(r).toEqual({ status: 200, body: OK });
}

describe('vehicle reboot in the middle of a burst', () => {
  it('500 commands over 10 VINs: every one answered 200, each executed exactly once, no counter reused', async () => {
    stack = await startStack({ vehicles: 10 });
    const s = stack;
    const vins = Array.from({ length: 10 }, (_, i) => fleetVin(i));
    let done = 0;
    let rebooted = false;
    const results = await Promise.all(
      Array.from({ length: 500 }, async (_, i) => {
        const vin = vins[i % 10]!;
        const res = await envelope(await s.cmd(i % 3 === 0 ? 'door_lock' : 'flash_lights', vin));
        if (++done === 200 && !rebooted) {
          rebooted = true;
          for (const v of vins) s.sim.sim.reboot(v, 'both');
        }
        return res;
      }),
    );
    expect(rebooted).toBe(true);
    const bad = results.filter((r) => r.status !== 200 || JSON.stringify(r.body) !== JSON.stringify(OK));
    expect(bad).toEqual([]);
    expect(s.executed()).toHaveLength(500);
    // Commands after the reboot ran in the new epochs.
    const reboots = s.sim.sim.log().filter((e) => e.event === 'reboot');
    expect(reboots).toHaveLength(10);
    const epochsPerPair = new Map<string, Set<string>>();
    for (const e of s.executed()) {
      const k = `${e.vin}/${e.channel}`;
      epochsPerPair.set(k, (epochsPerPair.get(k) ?? new Set()).add(e.epoch ?? ''));
    }
    expect([...epochsPerPair.values()].some((set) => set.size === 2)).toBe(true);
    checkInvariants(s);
  });
});

describe('lost and failed upstream answers are never resent', () => {
  it('dropped answer: the vehicle executed it, the proxy answers "may have executed" and sends nothing again', async () => {
    stack = await startStack();
    const s = stack;
    const vin = fleetVin(0);
    await warm(s, vin);
    const before = s.recorder.commandsSent(vin).length;
    s.sim.sim.inject({ kind: 'drop', holdMs: 50 }, vin);
    const r = await envelope(await s.cmd('honk_horn', vin));
    expect(r.body.error).toBe('may_have_executed');
    expect([502, 503, 504]).toContain(r.status);
    expect(String(r.body.error_description)).toMatch(/may have executed/i);
    expect(s.recorder.commandsSent(vin).length - before).toBe(1);
    expect(s.executed(vin).filter((e) => e.command === 'honk_horn')).toHaveLength(1);
    // The session is still usable.
    await warm(s, vin);
    checkInvariants(s);
  });

  it.each([500, 502, 503, 504])('upstream %i after sending: 503/504 may_have_executed, sent once, session intact', async (status) => {
    stack = await startStack();
    const s = stack;
    const vin = fleetVin(1);
    await warm(s, vin);
    const executedBefore = s.executed(vin).length;
    const sentBefore = s.recorder.commandsSent(vin).length;
    s.sim.sim.inject({ kind: 'fail', status, error: `injected_${status}`, description: 'injected' }, vin);
    const r = await envelope(await s.cmd('flash_lights', vin));
    expect(r.status).toBe(status === 504 ? 504 : 503);
    expect(r.body.error).toBe('may_have_executed');
    expect(s.recorder.commandsSent(vin).length - sentBefore).toBe(1);
    // The injected failure happens before the vehicle: nothing executed.
    expect(s.executed(vin).length).toBe(executedBefore);
    await warm(s, vin);
    checkInvariants(s);
  });

  it('connection reset before the request reached the service: ambiguous to the proxy, reported as such, not resent', async () => {
    stack = await startStack({ tamper: true });
    const s = stack;
    const vin = fleetVin(0);
    await warm(s, vin);
    const sentBefore = s.recorder.commandsSent(vin).length;
    s.tamper!.next({ kind: 'reset_before' });
    const r = await envelope(await s.cmd('flash_lights', vin));
    expect(r.status).toBe(503);
    expect(r.body.error).toBe('may_have_executed');
    expect(s.recorder.commandsSent(vin).length - sentBefore).toBe(1);
    expect(s.executed(vin)).toHaveLength(1); // only the warm-up
    await warm(s, vin);
    checkInvariants(s);
  });

  it('connection reset after the vehicle executed: may_have_executed, executed once, not resent', async () => {
    stack = await startStack({ tamper: true });
    const s = stack;
    const vin = fleetVin(0);
    await warm(s, vin);
    s.tamper!.next({ kind: 'reset_after' });
    const r = await envelope(await s.cmd('honk_horn', vin));
    expect(r.status).toBe(503);
    expect(r.body.error).toBe('may_have_executed');
    expect(s.recorder.commandsSent(vin).filter((x) => x.domain === 3)).toHaveLength(2);
    expect(s.executed(vin).filter((e) => e.command === 'honk_horn')).toHaveLength(1);
    await warm(s, vin);
    checkInvariants(s);
  });

  it('connection refused (nothing sent): 502 upstream_unreachable, not "may have executed"', async () => {
    stack = await startStack({ tamper: true });
    const s = stack;
    const vin = fleetVin(0);
    await warm(s, vin);
    await s.tamper!.close(); // port closed: the next connect is refused
    const r = await envelope(await s.cmd('flash_lights', vin));
    expect(r.status).toBe(502);
    expect(r.body.error).toBe('upstream_unreachable');
    expect(s.executed(vin)).toHaveLength(1);
    checkInvariants(s);
  });

  it('timeout before the service answered anything (request swallowed): 504 may_have_executed, not resent', async () => {
    stack = await startStack({ tamper: true, timeout: '800ms' });
    const s = stack;
    const vin = fleetVin(0);
    await warm(s, vin);
    const sentBefore = s.recorder.commandsSent(vin).length;
    s.tamper!.next({ kind: 'hang_before' });
    const r = await envelope(await s.cmd('flash_lights', vin));
    expect(r.status).toBe(504);
    expect(r.body.error).toBe('may_have_executed');
    expect(s.recorder.commandsSent(vin).length - sentBefore).toBe(1);
    expect(s.executed(vin)).toHaveLength(1);
    checkInvariants(s);
  });

  it('timeout after the vehicle executed (slow answer): 504 may_have_executed, executed once', async () => {
    stack = await startStack({ timeout: '800ms' });
    const s = stack;
    const vin = fleetVin(0);
    await warm(s, vin);
    s.sim.sim.inject({ kind: 'delay', ms: 1500 }, vin);
    const r = await envelope(await s.cmd('honk_horn', vin));
    expect(r.status).toBe(504);
    expect(r.body.error).toBe('may_have_executed');
    expect(s.executed(vin).filter((e) => e.command === 'honk_horn')).toHaveLength(1);
    expect(s.recorder.commandsSent(vin)).toHaveLength(2);
    checkInvariants(s);
  });
});

describe('429 with Retry-After', () => {
  it('is passed to the client with its Retry-After and never retried', async () => {
    stack = await startStack({ limits: true });
    const s = stack;
    const vin = fleetVin(0);
    let limited: Response | undefined;
    for (let i = 0; i < 60 && !limited; i++) {
      const r = await s.cmd('flash_lights', vin);
      if (r.status === 429) limited = r;
      else {
        expect(r.status).toBe(200);
        await r.arrayBuffer();
      }
    }
    expect(limited).toBeDefined();
    const retryAfter = limited!.headers.get('retry-after');
    expect(retryAfter).toMatch(/^\d+$/);
    const body = (await limited!.json()) as Record<string, unknown>;
    expect(body.error).toBe('rate_limited');
    // Exactly one upstream request for the limited command, and one more for the next try.
    const before = s.recorder.requests.length;
    const again = await s.cmd('flash_lights', vin);
    expect(again.status).toBe(429);
    expect(again.headers.get('retry-after')).toMatch(/^\d+$/);
    await again.arrayBuffer();
    expect(s.recorder.requests.length - before).toBe(1);
    checkInvariants(s);
  });
});

/** The first base64 answer the simulator gave, decoded. */
function answerOf(text: string): UniversalMessage.RoutableMessage {
  return UniversalMessage.RoutableMessage.decode(fromBase64((JSON.parse(text) as { response: string }).response));
}

describe('malformed upstream answers: a clear 502, nothing resent, the session stays usable', () => {
  const cases: Array<[string, (body: string, s: Stack, vin: string) => string]> = [
    ['not JSON', () => '<html>upstream error</html>'],
    ['bad base64', () => JSON.stringify({ response: '%%% not base64 %%%' })],
    [
      'truncated protobuf',
      (body) => {
        const bytes = fromBase64((JSON.parse(body) as { response: string }).response);
        return JSON.stringify({ response: toBase64(bytes.subarray(0, Math.floor(bytes.length / 2))) });
      },
    ],
    [
      'a replayed earlier answer (old response counter)',
      (_body, s, vin) => {
        const earlier = s.tamper!.answers.get(vin)!;
        return earlier[earlier.length - 2]!; // the warm-up command's answer
      },
    ],
    [
      'an answer addressed to another request',
      (body) => {
        const m = answerOf(body);
        const addr = Uint8Array.from(m.toDestination!.routingAddress!);
        addr[0] = addr[0]! ^ 0xff;
        m.toDestination!.routingAddress = addr;
        return JSON.stringify({ response: toBase64(UniversalMessage.RoutableMessage.encode(m).finish()) });
      },
    ],
  ];

  it.each(cases)('%s', async (_name, rewrite) => {
    stack = await startStack({ tamper: true });
    const s = stack;
    const vin = fleetVin(2);
    await warm(s, vin);
    const sentBefore = s.recorder.commandsSent(vin).length;
    s.tamper!.next({ kind: 'rewrite', rewrite: (body) => rewrite(body, s, vin) });
    const r = await envelope(await s.cmd('honk_horn', vin));
    expect(r.status).toBe(502);
    expect(typeof r.body.error).toBe('string');
    expect(String(r.body.error_description).length).toBeGreaterThan(20);
    expect(r.body.response).toBeNull();
    expect(s.recorder.commandsSent(vin).length - sentBefore).toBe(1);
    expect(s.executed(vin).filter((e) => e.command === 'honk_horn')).toHaveLength(1);
    // Same session afterwards: no new handshake needed, the command executes.
    const handshakes = s.recorder.handshakesSent(vin).length;
    await warm(s, vin);
    expect(s.recorder.handshakesSent(vin).length).toBe(handshakes);
    checkInvariants(s);
  });

  it('a session-info answer with a wrong tag: 502, no session kept, the next command handshakes afresh', async () => {
    stack = await startStack({ tamper: true });
    const s = stack;
    const vin = fleetVin(3);
    s.tamper!.next({
      kind: 'rewrite',
      rewrite: (body) => {
        const m = answerOf(body);
        const tag = Uint8Array.from(m.signatureData!.sessionInfoTag!.tag!);
        tag[tag.length - 1] = tag[tag.length - 1]! ^ 1;
        m.signatureData!.sessionInfoTag!.tag = tag;
        return JSON.stringify({ response: toBase64(UniversalMessage.RoutableMessage.encode(m).finish()) });
      },
    });
    const r = await envelope(await s.cmd('flash_lights', vin));
    expect(r.status).toBe(502);
    expect(r.body.error).toBe('bad_vehicle_response');
    expect(s.recorder.commandsSent(vin)).toHaveLength(0);
    await warm(s, vin);
    expect(s.recorder.handshakesSent(vin)).toHaveLength(2);
    expect(s.executed(vin)).toHaveLength(1);
    checkInvariants(s);
  });
});

describe('slow peers: timeouts hold, nothing is buffered without bound', () => {
  it('an upstream that drips its answer is cut at the request budget (504)', async () => {
    stack = await startStack({ tamper: true, timeout: '700ms' });
    const s = stack;
    const vin = fleetVin(0);
    await warm(s, vin);
    s.tamper!.next({ kind: 'drip', everyMs: 100 });
    const r = await envelope(await s.cmd('flash_lights', vin));
    expect(r.status).toBe(504);
    expect(r.body.error).toBe('may_have_executed');
    expect(s.recorder.commandsSent(vin)).toHaveLength(2);
    checkInvariants(s);
  });

  it('an oversized upstream answer is dropped at the response limit, not buffered', async () => {
    stack = await startStack({ tamper: true, extraArgs: ['--max-response-bytes', '65536'] });
    const s = stack;
    const vin = fleetVin(0);
    await warm(s, vin);
    const huge = 256 * 1024 * 1024;
    s.tamper!.next({ kind: 'huge', bytes: huge });
    const r = await envelope(await s.cmd('flash_lights', vin));
    // The command was sent: whatever the answer was, it may have executed.
    expect(r.status).toBe(503);
    expect(r.body.error).toBe('may_have_executed');
    // The proxy stopped reading long before the end (socket buffers hold a few MB at most).
    await new Promise((res) => setTimeout(res, 50));
    expect(s.tamper!.hugeWritten).toBeLessThan(huge / 4);
    checkInvariants(s);
  });

  it('a client that gives up while its command waits behind a slow one: nothing is sent for it', async () => {
    stack = await startStack({ timeout: '5s' });
    const s = stack;
    const vin = fleetVin(0);
    await warm(s, vin);
    s.sim.sim.inject({ kind: 'delay', ms: 600 }, vin);
    const first = s.cmd('honk_horn', vin);
    await new Promise((r) => setTimeout(r, 100));
    // A raw socket: the client sends the whole request, then hangs up before the answer.
    const u = new URL(s.proxy.url);
    const sock = connect(Number(u.port), u.hostname);
    await new Promise((r) => sock.once('connect', r));
    sock.write(
      `POST /api/1/vehicles/${vin}/command/flash_lights HTTP/1.1\r\nHost: proxy\r\nAuthorization: Bearer ${s.token}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
    );
    await new Promise((r) => setTimeout(r, 100));
    sock.destroy();
    expect((await first).status).toBe(200);
    // Bounded wait for the proxy to finish the queue.
    for (let i = 0; i < 50 && s.recorder.commandsSent(vin).length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 100));
    expect(s.recorder.commandsSent(vin).map((x) => x.domain)).toEqual([3, 3]);
    expect(s.executed(vin).map((e) => e.command)).toEqual(['flash_lights', 'honk_horn']);
    checkInvariants(s);
  });
});

describe('bursts', () => {
  it('1,000 concurrent commands over 100 VINs plus 200 to one VIN: all succeed, one handshake per (VIN, domain)', async () => {
    stack = await startStack({ fleet: testFleet(101) });
    const s = stack;
    const jobs: Array<Promise<{ status: number; body: Record<string, unknown> }>> = [];
    // Each VIN gets both domains: VCSEC (door_lock) and infotainment (flash_lights).
    for (let i = 0; i < 1000; i++) jobs.push(s.cmd(Math.floor(i / 100) % 2 ? 'flash_lights' : 'door_lock', fleetVin(i % 100)).then(envelope));
    for (let i = 0; i < 200; i++) jobs.push(s.cmd(i % 2 ? 'flash_lights' : 'door_lock', fleetVin(100)).then(envelope));
    const results = await Promise.all(jobs);
    expect(results.filter((r) => r.status !== 200 || JSON.stringify(r.body) !== JSON.stringify(OK))).toEqual([]);
    expect(s.executed()).toHaveLength(1200);
    const handshakes = s.sim.sim.log().filter((e) => e.event === 'session_info');
    const pairs = new Set(handshakes.map((e) => `${e.vin}/${e.channel}`));
    expect(pairs.size).toBe(202);
    expect(handshakes).toHaveLength(202);
    checkInvariants(s);
  }, 60_000);
});
