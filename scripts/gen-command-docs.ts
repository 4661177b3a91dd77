/**
 * Writes docs/commands.md from the command catalogue (src/commands/).
 * Usage: npm run docs:commands   (test/unit/commands/docs.test.ts fails when the committed
 * file differs from what this would write).
 */
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { commandDocsMarkdown } from '../src/commands/index.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'docs', 'commands.md');
writeFileSync(out, commandDocsMarkdown());
console.log(`gen-command-docs: wrote ${out}`);
