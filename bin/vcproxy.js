#!/usr/bin/env node
// Entry point for `vcproxy` / `npx vcproxy`. Runs the compiled CLI when `npm run build`
// has produced dist/ (the container image), and otherwise the TypeScript sources through
// tsx (a fresh clone after `npm install`), so both paths run the same code.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(root, 'dist', 'cli.js');
let cli;
if (existsSync(built)) {
  cli = await import(pathToFileURL(built).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  cli = await import(pathToFileURL(join(root, 'src', 'cli.ts')).href);
}
await cli.runMain();
