/**
 * `vcproxy decode`: prints any routable message (command, answer, handshake) as readable
 * JSON, for debugging. Offline and read-only; it needs no key. The decoding itself lives
 * in src/ops/inspect.ts.
 */
import { parseArgs } from 'node:util';
import {
  MESSAGE_TYPES,
  decodeAs,
  decodeRoutable,
  extractMessageText,
  parseBytes,
  type MessageTypeName,
} from '../ops/inspect.js';
import { processIo, printError, usageError, type CliIo } from './tool-io.js';

const HELP = `Usage: vcproxy decode [options] <message | ->

Decodes a routable message and its payload and prints it as JSON (bytes as hex).
<message> is base64 (standard or URL-safe) or hex, or a JSON body that carries it
({"routable_message": "..."} or a signed_command answer {"response": "..."}).
Use - to read it from standard input.

Payloads are decoded by domain: commands to VCSEC as VCSEC.UnsignedMessage and to
infotainment as CarServer.Action; answers as VCSEC.FromVCSECMessage / CarServer.Response;
handshake answers' session_info as Signatures.SessionInfo. AES-GCM encrypted payloads
cannot be opened without the session key and are reported as encrypted.

Options:
  --type TYPE     decode as another message type instead of a routable message:
                  ${Object.keys(MESSAGE_TYPES).join(', ')}
  --hex           read the input as hex
  --base64        read the input as base64 (for base64 text that happens to look like hex)
  -h, --help      show this help

Exit codes: 0 decoded, 1 not a valid message, 2 wrong usage.`;

export async function run(args: string[], _env: NodeJS.ProcessEnv, io: CliIo = processIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: {
        type: { type: 'string' },
        hex: { type: 'boolean' },
        base64: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    return usageError(io, 'decode', err instanceof Error ? err.message : String(err));
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout.write(HELP + '\n');
    return 0;
  }
  if (positionals.length !== 1) return usageError(io, 'decode', 'give exactly one message (or - for standard input)');
  if (values.hex && values.base64) return usageError(io, 'decode', '--hex and --base64 exclude each other');
  const type = values.type;
  if (type !== undefined && !(type in MESSAGE_TYPES)) {
    return usageError(io, 'decode', `unknown --type "${type}"; one of ${Object.keys(MESSAGE_TYPES).join(', ')}`);
  }

  try {
    const raw = positionals[0] === '-' ? await io.readStdin() : positionals[0]!;
    const bytes = parseBytes(extractMessageText(raw), values.hex ? 'hex' : values.base64 ? 'base64' : 'auto');
    const out =
      type === undefined || type === 'routable' ? decodeRoutable(bytes) : decodeAs(type as MessageTypeName, bytes);
    io.stdout.write(JSON.stringify(out, null, 2) + '\n');
    return 0;
  } catch (err) {
    return printError(io, 'decode', err);
  }
}
