/**
 * A simulated vehicle: record fields, connectivity (online/asleep/offline with wake-up
 * timing), its two domains, enrolled keys with roles, application state, and the
 * handler for one signed `RoutableMessage` (handshake or command).
 */
import { toHex } from '../crypto/bytes.js';
import { VcpError } from '../protocol/errors.js';
import { CarServer, UniversalMessage, VCSEC } from '../protocol/pb.js';
import { decodeCarServer, decodeVcsec } from './decode.js';
import { DOMAIN_INFOTAINMENT, DOMAIN_VCSEC, Fault, SimDomain, type Enrolled, type SimDomainId } from './domain.js';
import { supportsSignedCommands } from './fleet.js';
import type { LimitKind } from './limits.js';
import { CHARGING_LIMITED_COMMANDS, VehicleState, compareFirmware } from './state.js';
import { roleFromNumber, type Connectivity, type Outcome, type RoleName, type SimCommand, type VehicleSpec } from './types.js';

export interface SimLogEntry {
  seq: number;
  time: string;
  vin: string;
  /** 'vcsec' | 'infotainment' | 'rest' */
  channel: string;
  /** session_info | command | fault | rest_command | wake_up | state */
  event: string;
  command?: string;
  result?: 'ok' | 'refused' | 'fault';
  reason?: string;
  fault?: string;
  counter?: number;
  epoch?: string;
  signer?: string;
  role?: string;
  /** The signed message passed authentication (signature, epoch, expiry, counter). */
  verified?: boolean;
  /** The vehicle changed state / acted on it (false for refusals and faults). */
  executed?: boolean;
  unmodelled?: boolean;
  /**
   * The decoded command parameters in the service's REST vocabulary (signed payloads are
   * decoded by src/sim/decode.ts; REST bodies as sent). PIN and password values are
   * replaced by "[redacted]": the log is served over HTTP and may go to the logger.
   */
  params?: Record<string, unknown>;
  /**
   * REST commands: HMAC-SHA256 (hex) of the raw request body under a per-simulator random
   * key — `sim.bodyDigest(body)` computes it — so a test can prove the body arrived byte
   * for byte without the log holding a PIN (a plain hash of a 4-digit PIN is a 10 000-try
   * brute force).
   */
  body_digest?: string;
}

export interface VehicleDeps {
  now: () => number;
  random: (n: number) => Uint8Array;
  schedule: (ms: number, fn: () => void) => void;
  timeScale: number;
  log: (e: Omit<SimLogEntry, 'seq' | 'time'>) => void;
  /** Counts one request against a daily limit of this vehicle: null = allowed, else Retry-After seconds. */
  takeLimit?: (kind: LimitKind) => number | null;
  /** Keyed digest of a REST body for the log (see SimLogEntry.body_digest). */
  digest?: (body: Uint8Array) => string;
}

/** Parameter names whose values are secrets (PINs, valet password). */
const SECRET_PARAMS = new Set(['pin', 'password']);

/** JSON-safe copy of decoded parameters with secret values redacted. */
export function loggableParams(params: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    if (SECRET_PARAMS.has(k)) {
      out[k] = v === '' || v === null ? v : '[redacted]';
      continue;
    }
    out[k] = jsonSafe(v, 0);
  }
  return out;
}

function jsonSafe(v: unknown, depth: number): unknown {
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Uint8Array) return toHex(v);
  if (depth > 4) return '[nested]';
  if (Array.isArray(v)) return v.map((x) => jsonSafe(x, depth + 1));
  if (typeof v === 'object') {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (x === undefined) continue;
      o[k] = SECRET_PARAMS.has(k) && x !== '' ? '[redacted]' : jsonSafe(x, depth + 1);
    }
    return o;
  }
  return String(v);
}

/** Minimum firmware that honours FLAG_ENCRYPT_RESPONSE (protocol.md). */
const ENCRYPT_RESPONSE_FIRMWARE = '2024.38';

export class SimVehicle {
  readonly spec: VehicleSpec;
  readonly id: number;
  readonly vehicleId: number;
  readonly vin: string;
  readonly signedCommands: boolean;
  connectivity: Connectivity;
  state!: VehicleState;
  vcsec!: SimDomain;
  infotainment!: SimDomain;
  /** Enrolled keys by hex of the 65-byte point. */
  readonly keys = new Map<string, Enrolled>();
  private wakeToken = 0;
  waking = false;
  private readonly deps: VehicleDeps;

  constructor(spec: VehicleSpec, index: number, deps: VehicleDeps) {
    this.spec = spec;
    this.deps = deps;
    this.vin = spec.vin;
    this.id = spec.id ?? 1_492_931_000_000 + index * 1_111;
    this.vehicleId = spec.vehicle_id ?? 1_000_000_000 + index;
    this.signedCommands = supportsSignedCommands(spec);
    this.connectivity = spec.state ?? 'online';
    this.resetState();
    this.vcsec = this.newDomain(DOMAIN_VCSEC);
    this.infotainment = this.newDomain(DOMAIN_INFOTAINMENT);
  }

  private newDomain(domain: SimDomainId): SimDomain {
    return new SimDomain({
      vin: this.vin,
      domain,
      now: this.deps.now,
      random: this.deps.random,
      lookupKey: (hex) => this.keys.get(hex),
    });
  }

  resetState(): void {
    this.state = new VehicleState(this.spec, {
      now: this.deps.now,
      schedule: this.deps.schedule,
      timeScale: this.deps.timeScale,
    });
    this.connectivity = this.spec.state ?? 'online';
    this.wakeToken++;
    this.waking = false;
  }

  domainById(d: number): SimDomain | undefined {
    return d === DOMAIN_VCSEC ? this.vcsec : d === DOMAIN_INFOTAINMENT ? this.infotainment : undefined;
  }

  enroll(publicKey: Uint8Array, role: RoleName): void {
    this.keys.set(toHex(publicKey), { publicKey, role });
  }

  get firmware(): string {
    return this.state.firmware;
  }

  /** `wake_up`: an asleep vehicle comes online after 10–60 s divided by the time scale. */
  wake(): void {
    const note = this.connectivity === 'online' ? 'already online' : this.connectivity === 'offline' ? 'unreachable (offline)' : this.waking ? 'already waking' : 'waking';
    this.deps.log({ vin: this.vin, channel: 'rest', event: 'wake_up', reason: note });
    if (this.connectivity !== 'asleep' || this.waking) return;
    this.waking = true;
    const token = ++this.wakeToken;
    const r = this.deps.random(1)[0] ?? 0;
    const seconds = 10 + (r / 255) * 50;
    this.deps.schedule((seconds * 1000) / this.deps.timeScale, () => {
      if (token !== this.wakeToken) return;
      this.waking = false;
      if (this.connectivity === 'asleep') this.connectivity = 'online';
      this.deps.log({ vin: this.vin, channel: 'rest', event: 'state', reason: 'woke up' });
    });
  }

  setConnectivity(c: Connectivity): void {
    this.connectivity = c;
    this.wakeToken++;
    this.waking = false;
  }

  /** The vehicle record of the list/detail/products endpoints. */
  record(): Record<string, unknown> {
    return {
      id: this.id,
      user_id: 800_001,
      vehicle_id: this.vehicleId,
      vin: this.vin,
      color: this.spec.color ?? null,
      access_type: 'OWNER',
      display_name: this.state.vehicleName,
      option_codes: this.spec.option_codes ?? '',
      cached_data: null,
      mobile_access_disabled: this.spec.mobile_access_disabled ?? false,
      granular_access: { hide_private: this.spec.hide_private ?? false },
      tokens: [],
      state: this.connectivity,
      in_service: false,
      id_s: String(this.id),
      calendar_enabled: true,
      api_version: null,
      backseat_token: null,
      backseat_token_updated_at: null,
      command_signing: this.signedCommands ? 'required' : 'off',
    };
  }

  /**
   * Runs a REST `command/{name}` (legacy vehicles, and the service-side commands every
   * vehicle takes): no key roles, the OAuth token is the authority. `rawBody` is the
   * request body as received, for the log's body_digest.
   */
  executeRest(cmd: SimCommand, rawBody?: Uint8Array): Outcome {
    const out = this.state.execute(cmd, undefined);
    const digest = rawBody && this.deps.digest ? { body_digest: this.deps.digest(rawBody) } : {};
    this.logOutcome('rest', 'rest_command', cmd, out, digest);
    return out;
  }

  private logOutcome(
    channel: string,
    event: string,
    cmd: SimCommand,
    out: Outcome,
    extra: Partial<SimLogEntry>,
  ): void {
    this.deps.log({
      vin: this.vin,
      channel,
      event,
      command: cmd.name,
      params: loggableParams(cmd.params),
      result: out.kind,
      executed: out.kind === 'ok',
      ...(out.kind === 'refused' ? { reason: out.reason } : {}),
      ...(out.kind === 'fault' ? { fault: faultName(out.fault), reason: out.why } : {}),
      ...(out.kind === 'ok' && out.data?.unmodelled ? { unmodelled: true } : {}),
      ...extra,
    });
  }

  /**
   * Handles one RoutableMessage addressed to this vehicle; returns the encoded answer, or
   * null when the vehicle would not answer at all (nothing to address a reply to).
   * Throws when the bytes are not a RoutableMessage (the caller answers 400).
   */
  handleRoutable(bytes: Uint8Array): Uint8Array | null {
    const msg = UniversalMessage.RoutableMessage.decode(bytes);
    const domainId = Number(msg.toDestination?.domain ?? 0);
    const uuid = msg.uuid ?? new Uint8Array(0);
    const domain = this.domainById(domainId);
    const channel = domainId === DOMAIN_VCSEC ? 'vcsec' : domainId === DOMAIN_INFOTAINMENT ? 'infotainment' : `domain_${domainId}`;
    const logFault = (fault: number, why: string, extra: Partial<SimLogEntry> = {}): void =>
      this.deps.log({ vin: this.vin, channel, event: 'fault', fault: faultName(fault), reason: why, result: 'fault', verified: false, executed: false, ...extra });

    // An unknown domain: answer from the infotainment verifier's envelope with the fault.
    if (!domain) {
      logFault(Fault.INVALID_DOMAINS, 'unknown destination domain');
      return this.infotainment.verifier.faultReply({ fault: Fault.INVALID_DOMAINS, request: msg });
    }
    const v = domain.verifier;
    if (uuid.length > 16) {
      logFault(Fault.BAD_PARAMETER, 'uuid longer than 16 bytes');
      return v.faultReply({ fault: Fault.BAD_PARAMETER, request: msg });
    }
    if (!msg.fromDestination?.routingAddress || msg.fromDestination.routingAddress.length !== 16) {
      // Without a routing address the answer cannot be delivered to the client.
      logFault(Fault.BAD_PARAMETER, 'from_destination must be a 16-byte routing address');
      return null;
    }

    // ---- handshake ----
    if (msg.sessionInfoRequest) {
      const pub = msg.sessionInfoRequest.publicKey ?? new Uint8Array(0);
      const known = this.keys.get(toHex(pub));
      if (!known) logFault(Fault.UNKNOWN_KEY_ID, 'session info requested for a key not enrolled');
      else
        this.deps.log({
          vin: this.vin,
          channel,
          event: 'session_info',
          signer: toHex(pub).slice(0, 16),
          role: known.role,
          epoch: toHex(domain.epoch),
          counter: domain.counterFor(pub),
        });
      return v.answerSessionInfoRequest(msg);
    }
    if (msg.sessionInfo) {
      logFault(Fault.DECODING, 'session info sent to a vehicle');
      return v.faultReply({ fault: Fault.DECODING, request: msg });
    }

    // Unauthenticated VCSEC status read is answered to anyone (as vehicles do over BLE).
    if (!msg.signatureData && domainId === DOMAIN_VCSEC && msg.protobufMessageAsBytes) {
      try {
        const req = decodeVcsec(msg.protobufMessageAsBytes);
        if (req.kind === 'info' && req.type === 0) {
          this.deps.log({ vin: this.vin, channel, event: 'status', result: 'ok', executed: false });
          return UniversalMessage.RoutableMessage.encode({
            toDestination: { routingAddress: msg.fromDestination.routingAddress },
            fromDestination: { domain: DOMAIN_VCSEC },
            protobufMessageAsBytes: this.vcsecStatus(),
          }).finish();
        }
      } catch {
        /* not a status request: falls through to verification, which rejects it */
      }
    }

    // ---- authenticated command ----
    const r = v.verifyCommand(msg);
    if (!r.ok) {
      const sd = msg.signatureData;
      const claimed = sd?.HMAC_PersonalizedData?.counter ?? sd?.AES_GCM_PersonalizedData?.counter;
      logFault(r.fault, 'verification failed', {
        ...(r.signerPublicKey ? { signer: toHex(r.signerPublicKey).slice(0, 16) } : {}),
        // The counter the message claimed (unauthenticated): lets a test see which attempt failed.
        ...(claimed !== undefined && claimed !== null ? { counter: Number(claimed) } : {}),
      });
      return v.faultReply(r);
    }
    const logBase = {
      verified: true,
      counter: r.counter,
      epoch: toHex(domain.epoch),
      signer: toHex(r.signerPublicKey).slice(0, 16),
      role: r.signer.role,
    };
    let answer: Uint8Array;
    let outcome: Outcome;
    let logged: SimCommand;
    try {
      if (domainId === DOMAIN_VCSEC) {
        const x = this.executeVcsec(r.payload, r.signer);
        answer = x.answer;
        outcome = x.outcome;
        logged = { name: x.name, params: x.params ?? {} };
      } else {
        const cmd = decodeCarServer(r.payload);
        if (!cmd) {
          outcome = { kind: 'fault', fault: Fault.INVALID_COMMAND, why: 'no recognised action' };
          logged = { name: 'unknown', params: {} };
          answer = new Uint8Array(0);
        } else {
          logged = cmd;
          this.chargingLimit(cmd.name, channel, logBase);
          outcome = this.state.execute(cmd, r.signer.role);
          answer = this.carServerAnswer(cmd, outcome);
        }
      }
    } catch (e) {
      if (e instanceof VcpError) throw e; // the daily charging limit: the service answers 429
      outcome = { kind: 'fault', fault: Fault.DECODING, why: 'payload does not decode' };
      logged = { name: 'undecodable', params: {} };
      answer = new Uint8Array(0);
    }
    this.logOutcome(channel, 'command', logged, outcome, logBase);
    // Only firmware 2024.38+ honours FLAG_ENCRYPT_RESPONSE; older vehicles ignore the bit.
    if (compareFirmware(this.firmware, ENCRYPT_RESPONSE_FIRMWARE) < 0) r.encryptResponse = false;
    if (outcome.kind === 'fault') return v.reply(r, { fault: outcome.fault });
    return v.reply(r, { payload: answer });
  }

  /**
   * The spec's 5-a-day charging-command limit. The service can only tell a charging
   * command once the payload is decoded, so a signed one is counted after verification;
   * over the limit nothing is executed and the service answers 429 (the vehicle's counter
   * for that message is used up, as for any verified message). Throws VcpError 429.
   */
  chargingLimit(name: string, channel: string, extra: Partial<SimLogEntry> = {}): void {
    if (!CHARGING_LIMITED_COMMANDS.has(name) || !this.deps.takeLimit) return;
    const retryAfter = this.deps.takeLimit('charging');
    if (retryAfter === null) return;
    this.deps.log({
      vin: this.vin,
      channel,
      event: channel === 'rest' ? 'rest_command' : 'command',
      command: name,
      result: 'refused',
      reason: 'rate_limited',
      executed: false,
      ...extra,
    });
    throw new VcpError('rate_limited', `Daily charging-command limit reached for this vehicle; retry in ${retryAfter} s`, {
      status: 429,
      temporary: true,
      headers: { 'Retry-After': String(retryAfter) },
    });
  }

  private carServerAnswer(cmd: SimCommand, outcome: Outcome): Uint8Array {
    if (outcome.kind === 'fault') return new Uint8Array(0);
    const resp: Record<string, unknown> = {
      actionStatus:
        outcome.kind === 'ok' ? { result: 0 } : { result: 1, resultReason: { plainText: outcome.reason } },
    };
    if (outcome.kind === 'ok' && cmd.name === 'ping') resp.ping = { pingId: Number(cmd.params.ping_id ?? 0) };
    if (outcome.kind === 'ok' && cmd.name === 'vehicle_data') {
      // A subset of CarServer.VehicleData: enough for clients that read state over the
      // signed channel (the REST vehicle_data endpoint carries the full model).
      const s = this.state;
      resp.vehicleData = {
        chargeState: {
          batteryLevel: s.batteryLevel,
          chargeLimitSoc: s.chargeLimit,
          chargePortDoorOpen: s.chargePortOpen,
          chargingAmps: s.chargeAmps,
          chargeCurrentRequest: s.chargeAmps,
        },
        climateState: { isClimateOn: s.climateOn, driverTempSetting: s.driverTemp, passengerTempSetting: s.passengerTemp },
        closuresState: { locked: s.locked, doorOpenTrunkRear: s.rt !== 0 },
      };
    }
    return CarServer.Response.encode(resp).finish();
  }

  private vcsecStatus(): Uint8Array {
    const s = this.state;
    const cl = (v: number): number => (v ? 1 : 0);
    return VCSEC.FromVCSECMessage.encode({
      vehicleStatus: {
        closureStatuses: {
          frontDriverDoor: cl(s.doors.df),
          frontPassengerDoor: cl(s.doors.pf),
          rearDriverDoor: cl(s.doors.dr),
          rearPassengerDoor: cl(s.doors.pr),
          rearTrunk: cl(s.rt),
          frontTrunk: cl(s.ft),
          chargePort: s.chargePortOpen ? 1 : 0,
        },
        vehicleLockState: s.locked ? 1 : 0,
        vehicleSleepStatus: this.connectivity === 'online' ? 1 : 2,
        userPresence: s.userPresent ? 2 : 1,
      },
    }).finish();
  }

  private executeVcsec(payload: Uint8Array, signer: Enrolled): { answer: Uint8Array; outcome: Outcome; name: string; params?: Record<string, unknown> } {
    const req = decodeVcsec(payload);
    switch (req.kind) {
      case 'command': {
        this.chargingLimit(req.cmd.name, 'vcsec');
        const outcome = this.state.execute(req.cmd, signer.role);
        if (outcome.kind === 'refused') {
          // VCSEC reports refusals as a nominal error.
          return {
            answer: VCSEC.FromVCSECMessage.encode({ nominalError: { genericError: 0 } }).finish(),
            outcome,
            name: req.cmd.name,
            params: req.cmd.params,
          };
        }
        return { answer: VCSEC.FromVCSECMessage.encode({}).finish(), outcome, name: req.cmd.name, params: req.cmd.params };
      }
      case 'info': {
        if (req.type === 0) return { answer: this.vcsecStatus(), outcome: { kind: 'ok' }, name: 'information_request' };
        if (req.type === 5) {
          const entries = [...this.keys.values()];
          return {
            answer: VCSEC.FromVCSECMessage.encode({
              whitelistInfo: { numberOfEntries: entries.length, whitelistEntries: [], slotMask: (1 << entries.length) - 1 },
            }).finish(),
            outcome: { kind: 'ok' },
            name: 'whitelist_info',
          };
        }
        if (req.type === 6 && req.publicKey) {
          const e = this.keys.get(toHex(req.publicKey));
          if (!e) return { answer: VCSEC.FromVCSECMessage.encode({ nominalError: { genericError: 0 } }).finish(), outcome: { kind: 'refused', reason: 'key not found' }, name: 'whitelist_entry_info' };
          return {
            answer: VCSEC.FromVCSECMessage.encode({
              whitelistEntryInfo: { publicKey: { PublicKeyRaw: e.publicKey }, keyRole: roleNumber(e.role) },
            }).finish(),
            outcome: { kind: 'ok' },
            name: 'whitelist_entry_info',
          };
        }
        return { answer: VCSEC.FromVCSECMessage.encode({}).finish(), outcome: { kind: 'ok' }, name: 'information_request' };
      }
      case 'whitelist':
        return this.whitelistOp(req.op, req.publicKey, req.role, signer);
      default:
        return { answer: new Uint8Array(0), outcome: { kind: 'fault', fault: Fault.INVALID_COMMAND, why: 'unrecognised VCSEC message' }, name: 'unknown' };
    }
  }

  /** Key management: owners only (fleet managers on 2023.38+ may not add/remove others' keys). */
  private whitelistOp(
    op: string,
    publicKey: Uint8Array | undefined,
    roleNum: number | undefined,
    signer: Enrolled,
  ): { answer: Uint8Array; outcome: Outcome; name: string } {
    const status = (info: number): Uint8Array =>
      VCSEC.FromVCSECMessage.encode({
        commandStatus: {
          operationStatus: info === 0 ? 0 : 2,
          whitelistOperationStatus: { whitelistOperationInformation: info, operationStatus: info === 0 ? 0 : 2 },
        },
      }).finish();
    const name = `whitelist_${op}`;
    const removing = op === 'removePublicKeyFromWhitelist' || op === 'removePermissionsFromPublicKey';
    const fmAllowed = signer.role === 'fleet_manager' && !this.state.firmwareAtLeast('2023.38');
    if (signer.role !== 'owner' && !fmAllowed) {
      const info = removing ? 7 /* NO_PERMISSION_TO_REMOVE */ : 5; /* NO_PERMISSION_TO_ADD */
      return { answer: status(info), outcome: { kind: 'refused', reason: removing ? 'no_permission_to_remove' : 'no_permission_to_add' }, name };
    }
    if (!publicKey || publicKey.length !== 65 || publicKey[0] !== 4) {
      return { answer: status(6), outcome: { kind: 'refused', reason: 'invalid_public_key' }, name };
    }
    const hex = toHex(publicKey);
    if (removing) {
      if (!this.keys.has(hex)) return { answer: status(12), outcome: { kind: 'refused', reason: 'public_key_not_on_whitelist' }, name };
      if (hex === toHex(signer.publicKey)) return { answer: status(2), outcome: { kind: 'refused', reason: 'no_permission_to_remove_oneself' }, name };
      this.keys.delete(hex);
      // Forget the removed key's session state so nothing cached outlives the enrolment.
      this.vcsec.verifier.forget(publicKey);
      this.infotainment.verifier.forget(publicKey);
      return { answer: status(0), outcome: { kind: 'ok' }, name };
    }
    const role = roleNum === undefined ? undefined : roleFromNumber(roleNum);
    if (!role || role === 'none') return { answer: status(19), outcome: { kind: 'refused', reason: 'attempting_to_add_key_without_role' }, name };
    if (role === 'service') return { answer: status(20), outcome: { kind: 'refused', reason: 'attempting_to_add_key_with_service_role' }, name };
    if (this.keys.has(hex)) return { answer: status(13), outcome: { kind: 'refused', reason: 'key_already_on_whitelist' }, name };
    if (this.keys.size >= 20) return { answer: status(4), outcome: { kind: 'refused', reason: 'whitelist_full' }, name };
    this.keys.set(hex, { publicKey, role });
    return { answer: status(0), outcome: { kind: 'ok' }, name };
  }
}

function roleNumber(r: RoleName): number {
  const m: Record<RoleName, number> = { none: 0, service: 1, owner: 2, driver: 3, fleet_manager: 4, vehicle_monitor: 5, charging_manager: 6, guest: 8 };
  return m[r];
}

export function faultName(f: number): string {
  const names = UniversalMessage.MessageFault_E as unknown as Record<number, string>;
  return names[f] ?? `MESSAGEFAULT_${f}`;
}


