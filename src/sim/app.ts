/**
 * The simulated service's HTTP surface (Hono): the vehicle endpoints of the spec with the
 * service envelope `{response, error, error_description, messages}` and status codes,
 * plus the `/_sim/…` fault-injection API (documented in src/sim/README.md).
 *
 * Order of checks for vehicle requests, as the service does: bearer token (401) →
 * JSON content type on POST (406) → vehicle exists (404) → daily limit (429) → injected
 * fault → vehicle online (408) → protocol support (422/403) → the vehicle.
 */
import { Hono, type Context } from 'hono';
import { verifyJws } from '../keys/index.js';
import { VcpError, isVcpError } from '../protocol/errors.js';
import { CHARGING_LIMITED_COMMANDS, compareFirmware, REST_COMMANDS, SERVICE_REST_COMMANDS } from './state.js';
import type { Sim } from './sim.js';
import type { LimitKind } from './limits.js';
import type { SimVehicle } from './vehicle.js';
import { isRoleName, type Connectivity } from './types.js';

type Env = { Variables: { vehicle: SimVehicle } };

const PAGE_SIZE = 100;
const SECTIONS = new Set(['charge_state', 'climate_state', 'drive_state', 'gui_settings', 'vehicle_config', 'vehicle_state']);

function envelope(c: Context, status: number, error: string, description: string, headers?: Record<string, string>): Response {
  for (const [k, v] of Object.entries(headers ?? {})) c.header(k, v);
  return c.json({ response: null, error, error_description: description }, status as 400);
}

async function jsonBody(c: Context): Promise<Record<string, unknown> | undefined> {
  return parseObject(new Uint8Array(await c.req.arrayBuffer()));
}

/** A JSON object body (empty = {}); undefined when it is not JSON or not an object. */
function parseObject(raw: Uint8Array): Record<string, unknown> | undefined {
  const text = Buffer.from(raw).toString('utf8');
  if (text.trim() === '') return {};
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref?.());

/** Location fields a hide_private share may not configure for telemetry. */
const LOCATION_FIELDS = ['Location', 'OriginLocation', 'DestinationLocation', 'DestinationName', 'RouteLine', 'GpsState', 'GpsHeading'];

export function createSimApp(sim: Sim): Hono<Env> {
  const app = new Hono<Env>();

  app.onError((err, c) => {
    if (isVcpError(err)) return envelope(c, err.status, err.code, err.message, err.headers);
    sim.logger?.error({ err: err.message }, 'sim internal error');
    return envelope(c, 500, 'internal_error', 'The simulator failed to handle this request; see its log');
  });
  app.notFound((c) => envelope(c, 404, 'not_found', `No such endpoint: ${c.req.method} ${c.req.path}`));

  app.get('/status', (c) => c.text('ok'));

  // ------------------------------------------------------------------ /_sim controls
  registerSimControls(app, sim);

  // ------------------------------------------------------------------ /api/1
  app.use('/api/*', async (c, next) => {
    const auth = c.req.header('authorization') ?? '';
    const m = /^Bearer\s+(\S.*)$/i.exec(auth);
    if (!m || m[1]!.trim() === '') {
      return envelope(c, 401, 'unauthorized', 'Send Authorization: Bearer <access token>; any non-empty token is accepted by the simulator');
    }
    if (c.req.method === 'POST' || c.req.method === 'PUT' || c.req.method === 'PATCH') {
      const ct = (c.req.header('content-type') ?? '').toLowerCase();
      if (!ct.split(';')[0]!.trim().startsWith('application/json')) {
        return envelope(c, 406, 'not_a_JSON_request', 'Set Content-Type: application/json on POST requests');
      }
    }
    await next();
  });

  app.get('/api/1/products', (c) => {
    const vehicles = sim.vehicles.map((v) => v.record());
    return c.json({ response: vehicles, count: vehicles.length });
  });

  app.get('/api/1/vehicles', (c) => {
    const perPage = clampInt(c.req.query('per_page'), 1, PAGE_SIZE, PAGE_SIZE);
    const total = sim.vehicles.length;
    const pages = Math.max(1, Math.ceil(total / perPage));
    const page = clampInt(c.req.query('page'), 1, pages, 1);
    const slice = sim.vehicles.slice((page - 1) * perPage, page * perPage).map((v) => v.record());
    return c.json({
      response: slice,
      pagination: {
        previous: page > 1 ? page - 1 : null,
        next: page < pages ? page + 1 : null,
        current: page,
        per_page: perPage,
        count: total,
        pages,
      },
      count: total,
    });
  });

  app.post('/api/1/vehicles/fleet_status', async (c) => {
    const body = await jsonBody(c);
    const vins = body?.vins;
    if (!Array.isArray(vins) || vins.some((v) => typeof v !== 'string')) {
      return c.json(
        { response: null, error: 'invalid_request', error_description: 'Body must be {"vins": ["<VIN>", …]}', messages: { vins: ['must be an array of VINs'] } },
        400,
      );
    }
    const info: Record<string, unknown> = {};
    const paired: string[] = [];
    const unpaired: string[] = [];
    for (const vin of vins as string[]) {
      const v = sim.find(vin);
      if (!v) continue;
      (v.keys.size > 0 ? paired : unpaired).push(v.vin);
      info[v.vin] = {
        firmware_version: v.firmware,
        vehicle_command_protocol_required: v.signedCommands,
        safety_screen_streaming_toggle_enabled: v.signedCommands ? null : false,
        fleet_telemetry_version: compareFirmware(v.firmware, '2023.20') >= 0 ? '1.0.0' : null,
        total_number_of_keys: v.keys.size,
        discounted_device_data: vins.length === 1,
      };
    }
    return c.json({ response: { key_paired_vins: paired, unpaired_vins: unpaired, vehicle_info: info } });
  });

  app.post('/api/1/vehicles/fleet_telemetry_config_jws', async (c) => {
    const body = await jsonBody(c);
    const token = body?.token;
    const vins = body?.vins;
    if (typeof token !== 'string' || !Array.isArray(vins)) {
      return envelope(c, 400, 'invalid_request', 'Body must be {"vins": [...], "token": "<JWS>"}');
    }
    const verified = verifyJws(token); // throws VcpError 400 on a bad token
    const issuerHex = Buffer.from(verified.issuer).toString('hex');
    const config = (verified.claims.fields ?? (verified.claims.config as Record<string, unknown> | undefined)?.fields ?? {}) as Record<string, unknown>;
    const wantsLocation = LOCATION_FIELDS.some((f) => Object.prototype.hasOwnProperty.call(config, f));
    const skipped = { missing_key: [] as string[], unsupported_hardware: [] as string[], unsupported_firmware: [] as string[], max_configs: [] as string[] };
    let updated = 0;
    for (const vin of vins) {
      const v = typeof vin === 'string' ? sim.find(vin) : undefined;
      if (!v) continue;
      if (wantsLocation && v.spec.hide_private) {
        return envelope(c, 403, 'forbidden', `location access not granted for ${v.vin} (shared with hide_private)`);
      }
      if (!v.signedCommands) skipped.unsupported_hardware.push(v.vin);
      else if (compareFirmware(v.firmware, '2024.26') < 0) skipped.unsupported_firmware.push(v.vin);
      else if (!v.keys.has(issuerHex)) skipped.missing_key.push(v.vin);
      else updated++;
    }
    return c.json({ response: { updated_vehicles: updated, skipped_vehicles: skipped } });
  });

  // Per-vehicle routes: resolve the vehicle first.
  const vehicleRoute = new Hono<Env>();
  vehicleRoute.use('*', async (c, next) => {
    const id = c.req.param('id') ?? '';
    const v = sim.find(id);
    if (!v) return envelope(c, 404, 'not_found', `Vehicle ${id} not found; list vehicles with GET /api/1/vehicles`);
    c.set('vehicle', v);
    await next();
  });

  vehicleRoute.get('/', (c) => c.json({ response: c.get('vehicle').record() }));

  vehicleRoute.get('/vehicle_data', async (c) => {
    const v = c.get('vehicle');
    const pre = await gate(c, sim, v, 'device_data');
    if (pre) return pre;
    const endpoints = (c.req.query('endpoints') ?? '').split(/[;,]/).map((s) => s.trim()).filter(Boolean);
    // Firmware 2023.38+ only returns location when asked for location_data; a
    // hide_private share never does.
    const asked = endpoints.includes('location_data');
    const legacyDefault = endpoints.length === 0 && compareFirmware(v.firmware, '2023.38') < 0;
    const withLocation = !v.spec.hide_private && (asked || legacyDefault);
    let data = v.state.vehicleData(v.record(), withLocation, sim.now());
    if (endpoints.length > 0) {
      // Only the requested sections (location_data selects drive_state with position).
      const keep = new Set(endpoints.map((e) => (e === 'location_data' ? 'drive_state' : e)));
      data = Object.fromEntries(Object.entries(data).filter(([k]) => !SECTIONS.has(k) || keep.has(k)));
    }
    return finish(c, sim, v, () => c.json({ response: data }));
  });

  vehicleRoute.post('/wake_up', async (c) => {
    const v = c.get('vehicle');
    const limited = sim.limits.take(v.vin, 'wake');
    if (limited !== null) return tooMany(c, limited);
    const inj = sim.takeInjection(v.vin);
    if (inj?.kind === 'fail') return envelope(c, inj.status, inj.error, inj.description);
    v.wake();
    return applyAfter(c, inj, () => c.json({ response: v.record() }));
  });

  vehicleRoute.post('/signed_command', async (c) => {
    const v = c.get('vehicle');
    const body = await jsonBody(c);
    if (!body || typeof body.routable_message !== 'string') {
      return envelope(c, 400, 'invalid_request', 'Body must be {"routable_message": "<base64 RoutableMessage>"}');
    }
    const pre = await gate(c, sim, v, 'commands');
    if (pre) return pre;
    if (!v.signedCommands) {
      return envelope(c, 422, 'invalid_resource', 'This vehicle does not support the signed command protocol; use the REST command endpoints');
    }
    const b64 = body.routable_message;
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) return envelope(c, 400, 'invalid_request', 'routable_message must be standard base64');
    let answer: Uint8Array | null;
    try {
      answer = v.handleRoutable(new Uint8Array(Buffer.from(b64, 'base64')));
    } catch (e) {
      if (isVcpError(e)) throw e; // e.g. 429 for the daily charging-command limit
      return envelope(c, 400, 'invalid_request', 'routable_message is not a RoutableMessage');
    }
    if (answer === null) {
      // The vehicle cannot address an answer: the service times out waiting for it.
      return finish(c, sim, v, () => envelope(c, 408, 'vehicle unavailable: vehicle did not respond', 'The vehicle did not answer; it may or may not have received the command'));
    }
    const out = Buffer.from(answer).toString('base64');
    return finish(c, sim, v, () => c.json({ response: out }));
  });

  vehicleRoute.post('/command/:name', async (c) => {
    const v = c.get('vehicle');
    const name = c.req.param('name');
    const raw = new Uint8Array(await c.req.arrayBuffer());
    const body = parseObject(raw);
    if (!body) return envelope(c, 400, 'invalid_request', 'Body must be a JSON object');
    if (!REST_COMMANDS.has(name)) return envelope(c, 400, 'invalid_command', `Unknown command ${name}`);
    const pre = await gate(c, sim, v, 'commands');
    if (pre) return pre;
    // Commands the protocol has no vehicle message for are served for every vehicle.
    if (v.signedCommands && !SERVICE_REST_COMMANDS.has(name)) {
      return envelope(
        c,
        403,
        'vehicle_command_protocol_required',
        'signed command protocol required: send this command through the vehicle command proxy (signed_command)',
      );
    }
    if (CHARGING_LIMITED_COMMANDS.has(name)) v.chargingLimit(name, 'rest'); // throws 429 over the limit
    const out = v.executeRest({ name, params: body }, raw);
    const response =
      out.kind === 'ok' ? { result: true, reason: '' } : { result: false, reason: out.kind === 'refused' ? out.reason : out.why };
    return finish(c, sim, v, () => c.json({ response }));
  });

  vehicleRoute.get('/drivers', (c) => {
    const v = c.get('vehicle');
    const guest = v.state.guestAccess;
    return c.json({ response: guest ? [{ id: guest, role: 'guest' }] : [], count: guest ? 1 : 0 });
  });

  // Removing access: the only driver the sim models is the guest (spec: Guest access).
  vehicleRoute.delete('/drivers', (c) => {
    c.get('vehicle').state.removeGuest();
    return c.json({ response: 'ok' });
  });

  app.route('/api/1/vehicles/:id', vehicleRoute);
  return app;
}

/** Limit → injected failure → online check. Returns a Response to stop, or undefined. */
async function gate(c: Context<Env>, sim: Sim, v: SimVehicle, kind: LimitKind): Promise<Response | undefined> {
  const limited = sim.limits.take(v.vin, kind);
  if (limited !== null) return tooMany(c, limited);
  const inj = sim.takeInjection(v.vin);
  if (inj?.kind === 'fail') return envelope(c, inj.status, inj.error, inj.description);
  if (inj) pendingAfter.set(c, inj);
  if (v.spec.mobile_access_disabled) {
    return envelope(c, 401, 'mobile_access_disabled', 'The owner turned off mobile access on this vehicle; ask them to enable it in the vehicle settings');
  }
  if (v.connectivity !== 'online') {
    return envelope(c, 408, 'vehicle unavailable: vehicle is offline or asleep', `Vehicle is ${v.connectivity}; call wake_up and wait until its state is online`);
  }
  return undefined;
}

/** Injections that act on the answer (drop/delay), remembered between gate() and finish(). */
const pendingAfter = new WeakMap<Context, Exclude<import('./sim.js').Injection, { kind: 'fail' }>>();

async function finish(c: Context<Env>, _sim: Sim, _v: SimVehicle, respond: () => Response): Promise<Response> {
  return applyAfter(c, pendingAfter.get(c), respond);
}

async function applyAfter(c: Context, inj: import('./sim.js').Injection | undefined, respond: () => Response): Promise<Response> {
  if (!inj || inj.kind === 'fail') return respond();
  if (inj.kind === 'delay') {
    await sleep(inj.ms);
    return respond();
  }
  // drop: the vehicle acted but its answer is lost; the service gives up after holdMs.
  await sleep(inj.holdMs);
  return envelope(c, 408, 'vehicle unavailable: vehicle did not respond', 'No answer from the vehicle; the command may have executed');
}

function tooMany(c: Context, retryAfter: number): Response {
  return envelope(c, 429, 'rate_limited', `Daily limit reached for this vehicle; retry in ${retryAfter} s`, {
    'Retry-After': String(retryAfter),
  });
}

function clampInt(v: string | undefined, lo: number, hi: number, dflt: number): number {
  const n = v === undefined ? NaN : Number.parseInt(v, 10);
  if (!Number.isFinite(n)) return dflt;
  return Math.min(hi, Math.max(lo, n));
}

// ---------------------------------------------------------------------- /_sim routes

function registerSimControls(app: Hono<Env>, sim: Sim): void {
  const ok = (c: Context, extra: Record<string, unknown> = {}): Response => c.json({ response: { ok: true, ...extra } });
  const body = async (c: Context): Promise<Record<string, unknown>> => (await jsonBody(c)) ?? {};
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

  app.get('/_sim/log', (c) => {
    const since = c.req.query('since');
    const vin = c.req.query('vin');
    return c.json({ response: sim.log({ ...(vin ? { vin } : {}), ...(since ? { since: Number(since) } : {}) }) });
  });
  app.delete('/_sim/log', (c) => {
    sim.clearLog();
    return ok(c);
  });
  app.get('/_sim/vehicles/:vin', (c) => c.json({ response: sim.describe(c.req.param('vin')) }));
  app.get('/_sim/injections', (c) => c.json({ response: sim.pendingInjections() }));

  app.post('/_sim/reboot', async (c) => {
    const b = await body(c);
    const d = str(b.domain) ?? 'both';
    if (d !== 'vcsec' && d !== 'infotainment' && d !== 'both') return envelope(c, 400, 'invalid_request', 'domain must be vcsec, infotainment or both');
    sim.reboot(requireVin(b), d);
    return ok(c);
  });
  for (const state of ['sleep', 'offline', 'online'] as const) {
    app.post(`/_sim/${state}`, async (c) => {
      const b = await body(c);
      const s: Connectivity = state === 'sleep' ? 'asleep' : state;
      sim.setState(requireVin(b), s);
      return ok(c);
    });
  }
  app.post('/_sim/drop_next', async (c) => {
    const b = await body(c);
    sim.inject({ kind: 'drop', holdMs: num(b.hold_ms, 0, 120_000, 1_000) }, str(b.vin), num(b.count, 1, 1000, 1));
    return ok(c);
  });
  app.post('/_sim/delay_next', async (c) => {
    const b = await body(c);
    sim.inject({ kind: 'delay', ms: num(b.ms, 0, 120_000, 1_000) }, str(b.vin), num(b.count, 1, 1000, 1));
    return ok(c);
  });
  app.post('/_sim/fail_next', async (c) => {
    const b = await body(c);
    const status = num(b.status, 400, 599, 503);
    sim.inject(
      {
        kind: 'fail',
        status,
        error: str(b.error) ?? (status === 408 ? 'vehicle unavailable: vehicle is offline or asleep' : `injected_${status}`),
        description: str(b.error_description) ?? 'Failure injected by /_sim/fail_next',
      },
      str(b.vin),
      num(b.count, 1, 1000, 1),
    );
    return ok(c);
  });
  app.post('/_sim/skew_clock', async (c) => {
    const b = await body(c);
    const d = str(b.domain);
    if (d !== 'vcsec' && d !== 'infotainment') return envelope(c, 400, 'invalid_request', 'domain must be vcsec or infotainment');
    if (typeof b.seconds !== 'number' || !Number.isFinite(b.seconds)) return envelope(c, 400, 'invalid_request', 'seconds must be a number');
    sim.skewClock(requireVin(b), d, Math.trunc(b.seconds), b.absolute === true);
    return ok(c);
  });
  app.post('/_sim/reset', async (c) => {
    const b = await body(c);
    sim.reset(str(b.vin));
    return ok(c);
  });
  app.post('/_sim/enroll', async (c) => {
    const b = await body(c);
    const pk = str(b.public_key);
    if (!pk) return envelope(c, 400, 'invalid_request', 'public_key (PEM or 130 hex characters) is required');
    const role = str(b.role) ?? 'owner';
    if (!isRoleName(role)) return envelope(c, 400, 'invalid_role', `Unknown role ${role}`);
    const vins = Array.isArray(b.vins) ? (b.vins as unknown[]).filter((v): v is string => typeof v === 'string') : undefined;
    sim.enroll({ publicKey: pk, role, ...(vins ? { vins } : {}) });
    return ok(c);
  });
  app.post('/_sim/guest', async (c) => {
    const b = await body(c);
    const v = sim.vehicle(requireVin(b));
    if (b.event === 'scan_qr') {
      const id = str(b.guest_id) ?? `guest-${Buffer.from(sim.random(4)).toString('hex')}`;
      if (!v.state.guestScanQr(id)) return envelope(c, 409, 'guest_mode_off', 'Turn guest mode on (guest_mode command) before a guest can scan the QR code');
      return ok(c, { guest_id: id });
    }
    if (b.event === 'key_card_drive') {
      v.state.removeGuest();
      return ok(c);
    }
    return envelope(c, 400, 'invalid_request', 'event must be scan_qr or key_card_drive');
  });
  app.post('/_sim/limits', async (c) => {
    const b = await body(c);
    if (typeof b.enabled === 'boolean') sim.limits.enabled = b.enabled;
    if (b.reset === true) sim.limits.reset();
    return ok(c, { enabled: sim.limits.enabled });
  });
}

function requireVin(b: Record<string, unknown>): string {
  if (typeof b.vin !== 'string' || b.vin === '') {
    throw new VcpError('invalid_request', 'Body must name the vehicle: {"vin": "<VIN>"}', { status: 400 });
  }
  return b.vin;
}

function num(v: unknown, lo: number, hi: number, dflt: number): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) return dflt;
  return Math.min(hi, Math.max(lo, Math.trunc(v)));
}
