import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    // Crypto and e2e suites spawn servers on loopback; keep them isolated per file.
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
