import { readFileSync } from 'node:fs';
import { type IncomingMessage, request } from 'node:http';
import type { Socket } from 'node:net';

/**
 * A client that reads an answer at its own pace, and what the kernel holds of its connection: for
 * the tests of streamed answers through the local gateway (backpressure, instances held busy).
 */

/** A GET whose body the test reads at its own pace (nothing is read until it asks). */
export interface PacedResponse {
  res: IncomingMessage;
  socket: Socket;
  /** Body bytes taken so far. */
  taken(): number;
  /** Takes the body at `bytesPerSecond` (all at once without a rate) to its end; rejects when it is cut. */
  read(bytesPerSecond?: number): Promise<Buffer>;
}

/** Sends a GET and resolves once its status and headers are in, its body left unread. */
export function openPaced(url: string, headers: Record<string, string> = {}): Promise<PacedResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, agent: false }, (res) => {
      res.pause();
      const chunks: Buffer[] = [];
      let taken = 0;
      const take = (chunk: Buffer): void => {
        chunks.push(chunk);
        taken += chunk.length;
      };
      const read = (bytesPerSecond?: number): Promise<Buffer> =>
        new Promise((done, fail) => {
          res.once('end', () => done(Buffer.concat(chunks)));
          res.once('aborted', () => fail(new Error('the transfer was cut')));
          if (bytesPerSecond === undefined) {
            res.on('data', take);
            res.resume();
            return;
          }
          // Every 10 ms, what the rate allows: a client reading at a fixed pace, whatever the sockets hold.
          let allowance = 0;
          const next = (): Buffer | null => (allowance > 0 ? (res.read() as Buffer | null) : null);
          const pace = setInterval(() => {
            allowance += bytesPerSecond / 100;
            for (let chunk = next(); chunk; chunk = next()) {
              take(chunk);
              allowance -= chunk.length;
            }
          }, 10);
          res.once('close', () => clearInterval(pace));
        });
      resolve({ res, socket: req.socket as Socket, taken: () => taken, read });
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * What the kernel holds of one loopback TCP connection right now: the bytes queued in both its
 * sockets (sent, not yet read by the other end's program), from /proc/net/tcp (each end's
 * tx_queue and rx_queue).
 */
export function kernelQueuedBytes(socket: Socket): number {
  const ends = [socket.localPort, socket.remotePort];
  const port = (address: string): number => Number.parseInt(address.split(':')[1] ?? '', 16);
  let queued = 0;
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const [, local, remote, , queues] = line.trim().split(/\s+/);
    if (!local || !remote || !queues || !ends.includes(port(local)) || !ends.includes(port(remote))) continue;
    const [tx = '0', rx = '0'] = queues.split(':');
    queued += Number.parseInt(tx, 16) + Number.parseInt(rx, 16);
  }
  return queued;
}
