/**
 * HTTP layer of the signing proxy: the Hono app (routes, gatekeeping, envelopes, relaying).
 * See app.ts for what it owns and the security rules it enforces. Binding a listener is
 * the CLI's job (`startProxy` in src/cli/serve.ts).
 */
export { createProxyApp, createProxyHttp, errorResponse, relay } from './app.js';
export type { Catalogue, ProxyAppDeps, AppConfig, CommandCore, CommandInput, CommandAnswer } from './app.js';
export { proxyRequestListener } from './node.js';
export { readBody, parseJsonBody } from './body.js';
