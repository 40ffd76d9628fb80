import { mkdir } from 'node:fs/promises';
import type { RequestListener, Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { guarded, NO_PAGES } from './guard.js';

const require = createRequire(import.meta.url);

export interface EmbeddedEngine {
  endpoint: string;
  close(): Promise<void>;
}

/**
 * The embedded DynamoDB-compatible engine (dynalite): in memory, or on disk under `dataDir`.
 * It speaks DynamoDB's real HTTP API, so the service talks to it exactly as it talks to AWS.
 * dynalite itself answers anyone: any Host, any signature, and `Access-Control-Allow-Origin: *`
 * with every header a preflight asks for, so any web page could read and write every tenant's
 * data. Its request handler therefore runs behind the listeners' guard (local/guard.ts):
 * its own loopback name and port only, and no web page at all. Its server (and its close, which
 * also closes the store) stays dynalite's own.
 */
export async function startEmbeddedEngine(options: { port: number; host?: string; dataDir?: string | undefined }): Promise<EmbeddedEngine> {
  const dynalite = require('dynalite') as (opts: Record<string, unknown>) => Server;
  if (options.dataDir) await mkdir(options.dataDir, { recursive: true });
  const server = dynalite({
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
    ...(options.dataDir ? { path: options.dataDir } : {}),
  });
  const [handler] = server.listeners('request') as RequestListener[];
  server.removeAllListeners('request');
  if (handler) server.on('request', guarded(NO_PAGES, handler));
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
