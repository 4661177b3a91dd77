/**
 * `vcproxy jws`: signs a fleet-telemetry configuration offline with the command key
 * (Tesla.SS256 JWS, src/keys/jws.ts) — what the proxy does for
 * `POST /api/1/vehicles/fleet_telemetry_config` before forwarding to the `_jws` endpoint.
 * This file only parses arguments and prints; the signing is `signTelemetryConfig`.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { signTelemetryConfig } from '../keys/index.js';
import { VcpError } from '../protocol/errors.js';
import { loadToolKey, processIo, printError, usageError, type CliIo } from './tool-io.js';

const HELP = `Usage: vcproxy jws --key FILE --config FILE.json [--vin VIN]

Signs a fleet-telemetry configuration with your command key and prints the JWS token
(header {"alg":"Tesla.SS256","typ":"JWT"}; "iss" is your public key, "aud" the telemetry
client — any "iss"/"aud" in the file are overwritten).

FILE.json is either the configuration object itself, or the body you would send to
fleet_telemetry_config, {"vins": [...], "config": {...}}. For the latter the output is the
body for POST /api/1/vehicles/fleet_telemetry_config_jws: {"vins": [...], "token": "..."}.
Use --config - to read standard input.

Options:
  --key FILE      command private key (PEM) [VCPROXY_KEY]
  --config FILE   configuration JSON (or - for standard input)
  --vin VIN       bind the token to one vehicle instead of the whole fleet
  --allow-insecure-key-permissions
                  accept a key file readable by group/others (throwaway keys only)
                  [VCPROXY_ALLOW_INSECURE_KEY_PERMISSIONS]
  -h, --help      show this help

Exit codes: 0 signed, 1 could not sign, 2 wrong usage.`;

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
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
        config: { type: 'string' },
        vin: { type: 'string' },
        'allow-insecure-key-permissions': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    return usageError(io, 'jws', err instanceof Error ? err.message : String(err));
  }
  const v = parsed.values;
  if (v.help) {
    io.stdout.write(HELP + '\n');
    return 0;
  }
  const keyFile = v.key ?? env.VCPROXY_KEY;
  if (!keyFile) return usageError(io, 'jws', 'missing --key FILE (or VCPROXY_KEY)');
  if (!v.config) return usageError(io, 'jws', 'missing --config FILE.json');
  if (v.vin !== undefined && !/^[A-Za-z0-9]{1,32}$/.test(v.vin)) return usageError(io, 'jws', '--vin must be letters and digits');

  try {
    const text = v.config === '-' ? await io.readStdin() : readFileSync(v.config, 'utf8');
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      throw new VcpError('invalid_request', 'The configuration is not valid JSON; fix the file and retry.', { status: 400 });
    }
    if (!isObject(doc)) throw new VcpError('invalid_request', 'The configuration must be a JSON object.', { status: 400 });
    const key = loadToolKey(keyFile, v['allow-insecure-key-permissions'], env);
    const opts = v.vin === undefined ? {} : { vin: v.vin };
    // A create-request body: sign its config and print the body for the _jws endpoint.
    if (isObject(doc.config) && Array.isArray(doc.vins)) {
      const token = signTelemetryConfig(key, doc.config, opts);
      io.stdout.write(JSON.stringify({ vins: doc.vins, token }) + '\n');
    } else {
      io.stdout.write(signTelemetryConfig(key, doc, opts) + '\n');
    }
    return 0;
  } catch (err) {
    return printError(io, 'jws', err);
  }
}
