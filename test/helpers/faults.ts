import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * Real network faults, for what a real engine cannot produce on demand: an address where nothing
 * listens (connection refused) and a listener that accepts connections and never answers (timeout).
 */
export async function closedPortEndpoint(): Promise<string> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return `http://127.0.0.1:${port}`;
}

export async function silentEndpoint(): Promise<{ endpoint: string; close(): Promise<void> }> {
  const sockets = new Set<import('node:net').Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
