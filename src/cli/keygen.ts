/**
 * `vcproxy keygen --out DIR`: writes a fresh P-256 command key pair.
 *
 * Safety choices: the private key is created with mode 0600 and O_EXCL (`wx`), so we never
 * overwrite an existing key — replacing a paired key silently would lock the partner out of
 * every vehicle it was enrolled on. The directory is created 0700 when missing.
 */
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { generateKeyPair, loadKeyFile, type PrivateKeyFormat } from '../keys/index.js';

export const PRIVATE_KEY_FILE = 'private-key.pem';
export const PUBLIC_KEY_FILE = 'public-key.pem';

const HELP = `Usage: vcproxy keygen --out DIR [--format sec1|pkcs8] [--domain DOMAIN]

Generates a NIST P-256 command key pair:
  DIR/${PRIVATE_KEY_FILE}   private key (mode 0600) — the proxy signs commands with it
  DIR/${PUBLIC_KEY_FILE}    public key (SPKI PEM) — host it and pair it with vehicles

Options:
  --out DIR        directory to write to (created with mode 0700 if missing); required
  --format FMT     private key encoding: sec1 ("EC PRIVATE KEY", default) or pkcs8 ("PRIVATE KEY")
  --domain DOMAIN  your partner domain, to print the exact hosting URL and pairing link
  -h, --help       show this help

Refuses to overwrite an existing key: a key that is paired with vehicles cannot be replaced
without pairing again. Move the old files away first if you really mean it.
`;

export async function run(args: string[], _env: NodeJS.ProcessEnv): Promise<number> {
  let values: { out?: string | undefined; format?: string | undefined; domain?: string | undefined; help?: boolean | undefined };
  try {
    ({ values } = parseArgs({
      args,
      options: {
        out: { type: 'string' },
        format: { type: 'string' },
        domain: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: false,
      strict: true,
    }));
  } catch (e) {
    process.stderr.write(`vcproxy keygen: ${e instanceof Error ? e.message : String(e)}\n\n${HELP}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (!values.out) {
    process.stderr.write(`vcproxy keygen: --out DIR is required (for example --out ./keys)\n\n${HELP}`);
    return 2;
  }
  const format = (values.format ?? 'sec1') as PrivateKeyFormat;
  if (format !== 'sec1' && format !== 'pkcs8') {
    process.stderr.write(`vcproxy keygen: --format must be sec1 or pkcs8, not "${values.format}"\n`);
    return 2;
  }

  const dir = resolve(values.out);
  const privatePath = join(dir, PRIVATE_KEY_FILE);
  const publicPath = join(dir, PUBLIC_KEY_FILE);
  for (const p of [privatePath, publicPath]) {
    if (existsSync(p)) {
      process.stderr.write(
        `vcproxy keygen: ${p} already exists; refusing to overwrite it.\n` +
          'If that key is paired with vehicles, replacing it locks the proxy out of them. ' +
          'Move the existing files away first, or choose another --out directory.\n',
      );
      return 1;
    }
  }

  try {
    if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
    const pair = generateKeyPair({ format });
    // 'wx' = O_CREAT|O_EXCL: fails instead of overwriting if a key appeared meanwhile.
    writeFileSync(privatePath, pair.privatePem, { mode: 0o600, flag: 'wx' });
    chmodSync(privatePath, 0o600); // the umask may have narrowed mode bits, never widened — be explicit anyway
    writeFileSync(publicPath, pair.publicPem, { mode: 0o644, flag: 'wx' });
    // Self-check: the key we wrote is one the proxy will accept.
    const key = loadKeyFile(privatePath);
    process.stdout.write(nextSteps(privatePath, publicPath, key.fingerprint, values.domain));
    return 0;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why =
      code === 'EEXIST'
        ? 'a key file appeared while writing; refusing to overwrite it'
        : e instanceof Error
          ? e.message
          : String(e);
    process.stderr.write(`vcproxy keygen: could not write the key pair in ${dir}: ${why}\n`);
    return 1;
  }
}

function nextSteps(privatePath: string, publicPath: string, fp: string, domain: string | undefined): string {
  const d = domain ?? '<your-domain>';
  return [
    'Wrote a new P-256 command key pair:',
    `  private key: ${privatePath}  (mode 0600 — keep it secret, back it up, never commit it)`,
    `  public key:  ${publicPath}`,
    `  fingerprint: ${fp}`,
    '',
    'Next steps:',
    `  1. Host the public key at https://${d}/.well-known/appspecific/com.tesla.3p.public-key.pem`,
    '     (it must also answer requests with "Range: bytes=0-200"), then register the partner account.',
    `  2. Ask each vehicle owner to open the pairing link https://tesla.com/_ak/${d} and add the key.`,
    `  3. Start the proxy with this key: vcproxy serve --key ${privatePath}  (or VCPROXY_KEY=${privatePath})`,
    '',
  ].join('\n');
}
