/**
 * `vcproxy sign`: signs one command offline and prints the routable message (base64, ready
 * for a `signed_command` body) with a decoded view of it.
 *
 * Offline means no handshake: the caller supplies the session parameters the vehicle
 * would have sent (its public key, epoch, counter and clock), either as flags or as a
 * `--session FILE`. The command is planned by the catalogue (src/commands) exactly as the
 * proxy plans it, and signed by the client `Session` (src/crypto) exactly as the proxy
 * signs it — this file only parses arguments and composes those two.
 *
 * The private key never leaves `LocalKey`; the output holds the signed message, which is a
 * signed payload: treat it like a short-lived credential (it expires at `expires_at`).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { planCommand } from '../commands/index.js';
import { Session, type SessionJSON } from '../crypto/session.js';
import { parsePublicKey } from '../keys/index.js';
import { Domain, domainName } from '../protocol/domains.js';
import { VcpError } from '../protocol/errors.js';
import { decodeAs, decodeRoutable, toHex } from '../ops/inspect.js';
import { loadToolKey, processIo, printError, usageError, type CliIo } from './tool-io.js';

const HELP = `Usage: vcproxy sign --key FILE --vin VIN --command NAME [--body JSON] <session> [options]

Signs one vehicle command offline and prints JSON with:
  routable_message  the signed RoutableMessage, base64 (POST it as {"routable_message": ...}
                    to /api/1/vehicles/{vin}/signed_command)
  decoded           that message decoded (as \`vcproxy decode\` shows it)
  payload           the signed payload decoded (VCSEC.UnsignedMessage or CarServer.Action)
  counter, expires_at, epoch, domain, method, next_session

Session parameters (what the vehicle sent in its session info; \`vcproxy decode\` of a
handshake answer shows them under sessionInfo.message). Either flags:
  --vehicle-key KEY   vehicle public key: PEM file, PEM text or 130 hex digits
  --epoch HEX         session epoch, 32 hex digits
  --counter N         the vehicle's counter; the command is signed with N+1
  --clock N           the vehicle clock (clock_time, seconds into the epoch)
or a JSON file:
  --session FILE      {"publicKey": hex, "epoch": hex, "counter": N, "clockTime": N}
                      (the decoded sessionInfo.message; "vehicleKey"/"clock" also work;
                      a missing counter or clockTime means 0, as in protobuf),
                      or a stored session (the proxy's Session JSON, "v": 1).
                      "next_session" in the output can be saved and passed back here to
                      sign the next command with the next counter.

Options:
  --key FILE          command private key (PEM) [VCPROXY_KEY]
  --vin VIN           vehicle identification number the command is bound to
  --command NAME      command name, as in /api/1/vehicles/{vin}/command/{NAME}
  --body JSON         command body as JSON text (default {}); --body @FILE reads a file
  --method M          hmac (default; what the service accepts) or aes-gcm (encrypted)
  --expires-in SEC    lifetime on the vehicle clock in seconds (default 30)
  --raw               print only the base64 routable message (for scripts)
  --allow-insecure-key-permissions
                      accept a key file readable by group/others (throwaway keys only)
                      [VCPROXY_ALLOW_INSECURE_KEY_PERMISSIONS]
  -h, --help          show this help

Exit codes: 0 signed, 1 could not sign (message says why), 2 wrong usage.`;

const DEFAULT_EXPIRES_IN_SEC = 30;

interface SessionParams {
  vehicleKey: Uint8Array;
  epoch: string;
  counter: number;
  clockTime: number;
}

function badSession(why: string): VcpError {
  return new VcpError('invalid_session_parameters', `Session parameters: ${why}.`, { status: 400 });
}

function parseUint32(name: string, v: unknown): number {
  const n = typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 0xffff_ffff) {
    throw badSession(`${name} must be a whole number between 0 and 4294967295`);
  }
  return n;
}

function parseEpoch(v: unknown): string {
  if (typeof v !== 'string' || !/^[0-9a-fA-F]{32}$/.test(v)) throw badSession('epoch must be 32 hex digits (16 bytes)');
  return v.toLowerCase();
}

/** A vehicle key given as a file path, PEM text or hex. */
function parseVehicleKey(v: unknown): Uint8Array {
  if (typeof v !== 'string' || v === '') throw badSession('the vehicle public key is missing');
  const text = !v.includes('-----BEGIN') && !/^[0-9a-fA-F]+$/.test(v) && existsSync(v) ? readFileSync(v, 'utf8') : v;
  return parsePublicKey(text.trim());
}

function first(obj: Record<string, unknown>, ...names: string[]): unknown {
  for (const n of names) if (obj[n] !== undefined) return obj[n];
  return undefined;
}

function sessionFromFile(path: string): SessionParams | SessionJSON {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw badSession(`cannot read ${path} as JSON (${err instanceof Error ? err.message : 'error'})`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw badSession(`${path} must hold a JSON object`);
  const o = parsed as Record<string, unknown>;
  if (o.v === 1) return o as unknown as SessionJSON;
  return {
    vehicleKey: parseVehicleKey(first(o, 'publicKey', 'vehicleKey', 'vehicle_key', 'vehiclePublicKey')),
    epoch: parseEpoch(o.epoch),
    // Absent means 0, as in protobuf (a decoder may omit zero values).
    counter: parseUint32('counter', o.counter ?? 0),
    clockTime: parseUint32('clock', first(o, 'clockTime', 'clock_time', 'clock') ?? 0),
  };
}

function parseBody(text: string | undefined): unknown {
  if (text === undefined) return {};
  const raw = text.startsWith('@') ? readFileSync(text.slice(1), 'utf8') : text;
  try {
    return JSON.parse(raw);
  } catch {
    // Never echo the body: it may carry a PIN or password.
    throw new VcpError('invalid_request', '--body is not valid JSON; pass a JSON object such as \'{"percent": 80}\'.', {
      status: 400,
    });
  }
}

export async function run(args: string[], env: NodeJS.ProcessEnv, io: CliIo = processIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        key: { type: 'string' },
        vin: { type: 'string' },
        command: { type: 'string' },
        body: { type: 'string' },
        session: { type: 'string' },
        'vehicle-key': { type: 'string' },
        epoch: { type: 'string' },
        counter: { type: 'string' },
        clock: { type: 'string' },
        method: { type: 'string' },
        'expires-in': { type: 'string' },
        raw: { type: 'boolean' },
        'allow-insecure-key-permissions': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    return usageError(io, 'sign', err instanceof Error ? err.message : String(err));
  }
  const v = parsed.values;
  if (v.help) {
    io.stdout.write(HELP + '\n');
    return 0;
  }
  const keyFile = v.key ?? env.VCPROXY_KEY;
  if (!keyFile) return usageError(io, 'sign', 'missing --key FILE (or VCPROXY_KEY)');
  if (!v.vin) return usageError(io, 'sign', 'missing --vin VIN');
  if (!/^[A-Za-z0-9]{1,32}$/.test(v.vin)) return usageError(io, 'sign', '--vin must be letters and digits (a 17-character VIN)');
  if (!v.command) return usageError(io, 'sign', 'missing --command NAME');
  const method = v.method ?? 'hmac';
  if (method !== 'hmac' && method !== 'aes-gcm') return usageError(io, 'sign', '--method must be hmac or aes-gcm');
  const expiresIn = v['expires-in'] === undefined ? DEFAULT_EXPIRES_IN_SEC : Number(v['expires-in']);
  if (!Number.isInteger(expiresIn) || expiresIn < 1 || expiresIn > 86_400) {
    return usageError(io, 'sign', '--expires-in must be whole seconds between 1 and 86400');
  }
  const flagSession = [v['vehicle-key'], v.epoch, v.counter, v.clock];
  const someFlags = flagSession.some((x) => x !== undefined);
  if (v.session !== undefined && someFlags) {
    return usageError(io, 'sign', 'give either --session FILE or --vehicle-key/--epoch/--counter/--clock, not both');
  }
  if (v.session === undefined && !flagSession.every((x) => x !== undefined)) {
    return usageError(io, 'sign', 'session parameters missing: give --session FILE, or all of --vehicle-key, --epoch, --counter and --clock');
  }

  try {
    const body = parseBody(v.body);
    const planned = planCommand(v.command, body);
    if (!planned.ok) throw planned.error;
    const plan = planned.plan;
    if (plan.kind !== 'signed') {
      throw new VcpError(
        'not_signed_command',
        `${v.command} with this body is not a signed command (the proxy ${plan.kind === 'wake' ? 'calls REST wake_up' : 'forwards it to the REST command endpoint'}); there is nothing to sign offline.`,
        { status: 400 },
      );
    }

    const key = loadToolKey(keyFile, v['allow-insecure-key-permissions'], env);
    const now = Date.now();
    const params: SessionParams | SessionJSON =
      v.session !== undefined
        ? sessionFromFile(v.session)
        : {
            vehicleKey: parseVehicleKey(v['vehicle-key']),
            epoch: parseEpoch(v.epoch),
            counter: parseUint32('--counter', v.counter),
            clockTime: parseUint32('--clock', v.clock),
          };
    let sessionJson: SessionJSON;
    if ('v' in params) {
      if (params.vin !== v.vin) throw badSession(`the session file is for VIN ${String(params.vin)}, not ${v.vin}`);
      if (params.domain !== plan.domain) {
        throw badSession(`the session file is for domain ${domainName(Number(params.domain))}, but ${v.command} goes to ${domainName(plan.domain)}`);
      }
      sessionJson = params;
    } else {
      sessionJson = {
        v: 1,
        vin: v.vin,
        domain: plan.domain,
        clientPublicKey: toHex(key.publicKey),
        vehiclePublicKey: toHex(params.vehicleKey),
        epoch: params.epoch,
        counter: params.counter,
        setTime: params.clockTime,
        // The vehicle clock read clockTime "now" (see Session's clock model).
        clockOffsetMs: params.clockTime * 1000 - now,
      };
    }
    const session = Session.fromJSON(sessionJson, key);
    const signed = session.signCommand(plan.payload, {
      expiresInSec: expiresIn,
      now,
      random: (n) => new Uint8Array(randomBytes(n)),
      method,
    });

    const routableMessage = Buffer.from(signed.bytes).toString('base64');
    if (v.raw) {
      io.stdout.write(routableMessage + '\n');
      return 0;
    }
    const out = {
      vin: v.vin,
      command: v.command,
      domain: domainName(plan.domain),
      method,
      counter: signed.counter,
      expires_at: signed.expiresAt,
      epoch: toHex(session.epoch),
      uuid: toHex(signed.uuid),
      routable_message: routableMessage,
      decoded: decodeRoutable(signed.bytes),
      payload: decodeAs(plan.domain === Domain.VEHICLE_SECURITY ? 'vcsec-unsigned' : 'carserver-action', plan.payload),
      // Pass this back with --session to sign the next command with the next counter.
      next_session: session.toJSON(),
    };
    io.stdout.write(JSON.stringify(out, null, 2) + '\n');
    return 0;
  } catch (err) {
    return printError(io, 'sign', err);
  }
}
