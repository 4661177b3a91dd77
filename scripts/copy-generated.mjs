#!/usr/bin/env node
/**
 * `npm run build` helper: tsc compiles src/**.ts but does not copy plain .js files, so the
 * generated protobuf module (src/protocol/gen/pb.js + pb.d.ts) is copied to
 * dist/protocol/gen/ by hand. Fails loudly if the generated files are missing
 * (run `npm run gen`). An argument names another destination directory (the benchmark's
 * build copies them to bench/.build/src/protocol/gen).
 */
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const from = join(root, 'src/protocol/gen');
const to = process.argv[2] ? resolve(process.argv[2]) : join(root, 'dist/protocol/gen');
mkdirSync(to, { recursive: true });
for (const name of ['pb.js', 'pb.d.ts']) {
  const src = join(from, name);
  if (!existsSync(src)) {
    console.error(`copy-generated: ${src} is missing; run \`npm run gen\` first`);
    process.exit(1);
  }
  copyFileSync(src, join(to, name));
}
console.log(`copy-generated: copied pb.js and pb.d.ts to ${to}`);
