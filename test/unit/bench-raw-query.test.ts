import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryBody, rawQuery } from '../../bench/raw-query.js';

/**
 * The floors' raw Query keeps its socket alive between pages and runs; an engine closes an idle one
 * (Node's servers after 5 s), and a request sent on it as it closes dies with "socket hang up".
 * Here the engine drops every connection at its second request, the same failure on demand.
 */
describe('Function: rawQuery (bench/raw-query.ts)', () => {
  let server: Server;
  let endpoint = '';
  const served = new WeakMap<Socket, number>();
  let requests = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      requests += 1;
      const onThisSocket = (served.get(req.socket) ?? 0) + 1;
      served.set(req.socket, onThisSocket);
      if (onThisSocket > 1) return req.socket.destroy();
      req.resume();
      res.writeHead(200, { 'Content-Type': 'application/x-amz-json-1.0' });
      res.end('{"Items":[],"Count":0}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('sends a Query again on a new socket when the kept-alive one was closed under it, and answers the page', async () => {
    const first = await rawQuery(endpoint, queryBody('t', 'T#a'));
    const second = await rawQuery(endpoint, queryBody('t', 'T#a'));

    expect(first.toString()).toBe('{"Items":[],"Count":0}');
    expect(second.toString()).toBe('{"Items":[],"Count":0}');
    expect(requests).toBe(3);
  });
});
