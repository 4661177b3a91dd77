/**
 * Benchmark child: the signing proxy exactly as `vcproxy serve` builds it (startProxy,
 * real config parser, silent logger), pointed at the simulator with a fixed --upstream.
 * Usage: proxy-server.ts <keyFile> <upstreamUrl>
 */
import { parseConfig, type ProxyConfig } from '../src/config.js';
import { startProxy } from '../src/cli/serve.js';
import { serveParent } from './common.js';

const [keyFile, upstream] = process.argv.slice(2);
const config = parseConfig(
  ['--key', keyFile!, '--port', '0', '--upstream', upstream!, '--log-level', 'silent', '--timeout', '30s', '--session-cache-size', '100000'],
  {},
) as ProxyConfig;
const proxy = await startProxy(config);
serveParent({ url: proxy.url }, async (m) => {
  if (m.cmd === 'stop') {
    await proxy.close();
    // A normal exit (not a signal) so --cpu-prof writes its profile.
    setImmediate(() => process.exit(0));
    return {};
  }
  throw new Error(`unknown command ${String(m.cmd)}`);
});
