/**
 * The committed src/protocol/gen/ must be exactly what `npm run gen` produces from proto/.
 *
 * Fast check (always): the generator's stamps — inputs hash (proto files, generator script,
 * protobufjs versions) and body hash — so a .proto edit without `npm run gen`, or a hand
 * edit of gen/, fails in milliseconds.
 * Full check (CI=true or VCP_GEN_FULL=1): regenerate into a temp dir and compare byte for
 * byte; this also catches generator drift the stamps cannot see. It takes ~10 s (pbts).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const script = join(root, 'scripts/gen-proto.mjs');
const temps: string[] = [];
const temp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'vcp-gen-'));
  temps.push(d);
  return d;
};
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

describe('generated protobuf code', () => {
  it('stamps match proto/ and the generated bodies', () => {
    const r = spawnSync(process.execPath, [script, '--check'], { cwd: root, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('the stamp check catches a proto edit and a hand edit', () => {
    // Work on a copy of the repo's relevant parts so the real tree is never touched.
    const copy = temp();
    for (const p of ['proto', 'scripts', 'src/protocol/gen']) cpSync(join(root, p), join(copy, p), { recursive: true });
    symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'), 'dir');
    const run = () => spawnSync(process.execPath, [join(copy, 'scripts/gen-proto.mjs'), '--check'], { cwd: copy, encoding: 'utf8' });
    expect(run().status).toBe(0);

    const keys = join(copy, 'proto/keys.proto');
    const original = readFileSync(keys, 'utf8');
    writeFileSync(keys, original.replace('ROLE_GUEST = 8;', 'ROLE_GUEST = 8;\n  ROLE_EXTRA = 9;'));
    const stale = run();
    expect(stale.status).toBe(1);
    expect(stale.stderr).toMatch(/different proto/);
    writeFileSync(keys, original);

    const js = join(copy, 'src/protocol/gen/pb.js');
    writeFileSync(js, readFileSync(js, 'utf8') + '\n// sneaky\n');
    const edited = run();
    expect(edited.status).toBe(1);
    expect(edited.stderr).toMatch(/edited by hand/);
  });

  it.runIf(process.env.CI === 'true' || process.env.VCP_GEN_FULL === '1')(
    'matches a fresh generation byte for byte',
    { timeout: 180_000 },
    () => {
      const out = temp();
      execFileSync(process.execPath, [script, out], { cwd: root, stdio: 'pipe' });
      for (const name of ['pb.js', 'pb.d.ts']) {
        const fresh = readFileSync(join(out, name), 'utf8');
        const committed = readFileSync(join(root, 'src/protocol/gen', name), 'utf8');
        // Boolean compare: a multi-MB string diff in a failure message is useless.
        expect(committed === fresh, `${name} is stale; run \`npm run gen\` and commit src/protocol/gen/`).toBe(true);
      }
    },
  );
});
