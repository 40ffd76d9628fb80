/**
 * `node:http` for Powertools Tracer in the Lambda bundles (infra/build.ts serves this to the
 * tracer's modules in place of the ES module): Node's own CommonJS module, as lib/auth/key-set.ts
 * takes it. On Node 22 and later an ES import of `node:http` reads every export, and three of
 * them (WebSocket, CloseEvent, MessageEvent) load undici at init, tens of milliseconds of every
 * cold start (docs/decisions.md, "No ES import of node:http in the bundles").
 *
 * Invariant: the tracer takes the module's default export only (`import http from 'node:http'`).
 */
const http: typeof import('node:http') = process.getBuiltinModule('node:http');
export default http;
