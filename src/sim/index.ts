/**
 * src/sim — the fleet sandbox: a simulated service (the spec's vehicle endpoints, envelope,
 * status codes and daily limits) and the vehicles behind it, each with a VCSEC and an
 * infotainment domain that verify signed commands as strictly as a real vehicle, plus the
 * state machines of the spec and a `/_sim/…` fault-injection API.
 *
 * Must not: import the proxy (src/session, src/transport, src/http) or the command
 * catalogue (src/commands). It decodes VCSEC/CarServer payloads itself so a catalogue bug
 * cannot pass its own test. Only src/protocol, src/crypto and src/keys are allowed.
 * Only the CLI (`vcproxy sim` / `vcproxy sandbox`) and tests start it.
 */
import { serve, type ServerType } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { createSimApp } from './app.js';
import { Sim, type SimOptions } from './sim.js';

export { createSimApp } from './app.js';
export { Sim, type SimOptions, type EnrollSpec, type Injection } from './sim.js';
export { DEFAULT_FLEET, DEFAULT_FLEET_VINS, parseFleet, supportsSignedCommands } from './fleet.js';
export { DISCOVERY_LIMITS } from './limits.js';
export type { SimLogEntry } from './vehicle.js';
export type { FleetSpec, VehicleSpec, RoleName } from './types.js';

export interface StartSimOptions extends SimOptions {
  host?: string;
  /** 0 = ephemeral. Default 4444. */
  port?: number;
}

export interface RunningSim {
  url: string;
  sim: Sim;
  close(): Promise<void>;
}

/** Starts the simulator on host:port (default 127.0.0.1:4444). */
export async function startSim(opts: StartSimOptions = {}): Promise<RunningSim> {
  const sim = new Sim(opts);
  const app = createSimApp(sim);
  const host = opts.host ?? '127.0.0.1';
  const port = opts.port ?? 4444;
  const server: ServerType = await new Promise((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: host, port }, () => resolve(s));
    s.once('error', reject);
  });
  const addr = server.address() as AddressInfo;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  let closed = false;
  return {
    url: `http://${shownHost}:${addr.port}`,
    sim,
    close: async () => {
      if (closed) return;
      closed = true;
      sim.close();
      await new Promise<void>((resolve) => {
        // Held (dropped/delayed) answers must not keep the process alive on shutdown.
        const s = server as unknown as { closeAllConnections?: () => void };
        server.close(() => resolve());
        s.closeAllConnections?.();
      });
    },
  };
}
