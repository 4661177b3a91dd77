/**
 * Benchmark child: the fleet simulator in zero-latency mode — daily limits off, wake-up
 * delays divided by 1e6 — with a synthetic fleet, the given public keys enrolled, and a
 * request counter in front of the app (upstream calls are counted HERE, at the upstream,
 * not by the proxy). Usage: sim-server.ts <vehicles> <publicKeyHex>...
 */
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { createSimApp, Sim } from '../src/sim/index.js';
import { benchFleet, serveParent } from './common.js';

const [countArg, ...keys] = process.argv.slice(2);
const sim = new Sim({
  fleet: benchFleet(Number(countArg ?? 100)),
  enroll: keys.map((publicKey) => ({ publicKey, role: 'owner' })),
  limits: false,
  timeScale: 1e6,
  // Big enough for one measurement; the driver clears the log between phases.
  maxLogEntries: 1_000_000,
});
const app = createSimApp(sim);
let requests = 0;
/** Requests per VIN, so a phase can count only the calls for its own vehicles. */
const perVin = new Map<string, number>();
const VIN_IN_PATH = /^\/api\/1\/vehicles\/([A-Z0-9]{17})\//;
const server = serve({
  fetch: (req: Request, env: unknown) => {
    requests++;
    const m = VIN_IN_PATH.exec(new URL(req.url).pathname);
    if (m) perVin.set(m[1]!, (perVin.get(m[1]!) ?? 0) + 1);
    return app.fetch(req, env);
  },
  hostname: '127.0.0.1',
  port: 0,
});
server.once('listening', () => {
  const { port } = server.address() as AddressInfo;
  serveParent({ url: `http://127.0.0.1:${port}` }, async (m) => {
    switch (m.cmd) {
      case 'stats': {
        const entries = sim.log();
        const handshakes = new Map<string, number>();
        let executed = 0;
        let faults = 0;
        const faultNames: Record<string, number> = {};
        for (const e of entries) {
          if (e.event === 'session_info') handshakes.set(`${e.vin}/${e.channel}`, (handshakes.get(`${e.vin}/${e.channel}`) ?? 0) + 1);
          else if (e.event === 'command' && e.executed) executed++;
          else if (e.event === 'fault') {
            faults++;
            faultNames[e.fault ?? '?'] = (faultNames[e.fault ?? '?'] ?? 0) + 1;
          }
        }
        const perPair = [...handshakes.values()];
        const vins = Array.isArray(m.vins) ? (m.vins as string[]) : undefined;
        return {
          requests,
          requestsForVins: vins ? vins.reduce((a, v) => a + (perVin.get(v) ?? 0), 0) : undefined,
          executed,
          faults,
          faultNames,
          handshakes: perPair.reduce((a, b) => a + b, 0),
          pairs: perPair.length,
          maxPerPair: perPair.length ? Math.max(...perPair) : 0,
        };
      }
      case 'reset':
        sim.clearLog();
        requests = 0;
        perVin.clear();
        return {};
      case 'stop':
        sim.close();
        server.close();
        (server as unknown as { closeAllConnections(): void }).closeAllConnections();
        setImmediate(() => process.exit(0));
        return {};
      default:
        throw new Error(`unknown command ${String(m.cmd)}`);
    }
  });
});
