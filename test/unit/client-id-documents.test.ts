import { describe, expect, it } from 'vitest';
import { clientIdDocuments, documentFetch, documentRefused, isDocumentUrl } from '../../local/client-id-documents.js';

/**
 * Which client ID metadata documents the local authorization server fetches: https to a public
 * address, nothing on this machine or a private network however the address is spelled (a name's
 * addresses are checked as it is connected to: test/e2e/sign-in-hardening.test.ts), and an origin
 * CLIENT_ID_DOCUMENT_DEV_ORIGINS names as it is. Over HTTP, with the fixed answer time:
 * test/e2e/sign-in-hardening.test.ts.
 */

describe('Client ID metadata documents: the URLs fetched', () => {
  it.each([
    ['https on a public name', 'https://app.example/oauth/client.json'],
    ['https on a public address literal', 'https://93.184.216.34/client.json'],
    ['https on an address next to a private range', 'https://172.32.0.1/client.json'],
    ['https on a public IPv6 address', 'https://[2606:2800:220:1::1]/client.json'],
  ])('fetches %s after checking the address it connects to', (_what, url) => {
    expect(documentFetch(url)).toBe('public');
  });

  it.each([
    ['http on localhost', 'http://localhost:6274/client.json'],
    ['http on 127.0.0.1', 'http://127.0.0.1:6274/client.json'],
    ['http on [::1]', 'http://[::1]:6274/client.json'],
    ["http on a Runtime API's next event", 'http://127.0.0.1:39211/2018-06-01/runtime/invocation/next'],
    ['https on localhost', 'https://localhost:8443/client.json'],
    ['https on a name under .localhost', 'https://app.localhost/client.json'],
    ['https on 127.0.0.1', 'https://127.0.0.1:8443/client.json'],
    ['https on another loopback address', 'https://127.1.2.3/client.json'],
    ['https on 127.0.0.1 spelled as one number', 'https://2130706433/client.json'],
    ['https on 127.0.0.1 spelled in hexadecimal', 'https://0x7f.1/client.json'],
    ['https on [::1]', 'https://[::1]/client.json'],
    ['https on 127.0.0.1 mapped into IPv6', 'https://[::ffff:127.0.0.1]/client.json'],
    ['https on 10.0.0.1', 'https://10.0.0.1/client.json'],
    ['https on 172.16.0.1', 'https://172.16.0.1/client.json'],
    ['https on 172.31.255.254', 'https://172.31.255.254/client.json'],
    ['https on 192.168.1.1', 'https://192.168.1.1/client.json'],
    ['https on a private address mapped into IPv6', 'https://[::ffff:192.168.1.1]/client.json'],
    ['https on the link-local metadata address', 'https://169.254.169.254/latest/meta-data'],
    ['https on a shared address (100.64.0.0/10)', 'https://100.64.0.1/client.json'],
    ['https on the unspecified address', 'https://0.0.0.0/client.json'],
    ['https on the unspecified IPv6 address', 'https://[::]/client.json'],
    ['https on an IPv6 unique local address', 'https://[fd12:3456::1]/client.json'],
    ['https on an IPv6 link-local address', 'https://[fe80::1]/client.json'],
    ['https on a multicast address', 'https://224.0.0.1/client.json'],
    ['https on the broadcast address', 'https://255.255.255.255/client.json'],
    ['https on a NAT64 address (an IPv4 address inside)', 'https://[64:ff9b::a00:1]/client.json'],
    ['http off this machine', 'http://app.example/client.json'],
    ['http on a private address', 'http://10.0.0.1/client.json'],
  ])('fetches nothing for %s', (_what, url) => {
    expect(isDocumentUrl(url)).toBe(true);
    expect(documentFetch(url)).toBeUndefined();
  });

  it('fetches an origin CLIENT_ID_DOCUMENT_DEV_ORIGINS names as it is, http on loopback included, and no other origin of that machine', () => {
    const dev = ['http://localhost:6274', 'https://10.0.0.5:8443'];

    expect(documentFetch('http://localhost:6274/client.json', dev)).toBe('development');
    expect(documentFetch('https://10.0.0.5:8443/client.json', dev)).toBe('development');
    expect(documentFetch('http://localhost:6275/client.json', dev)).toBeUndefined();
    expect(documentFetch('http://127.0.0.1:6274/client.json', dev)).toBeUndefined();
  });

  it.each([
    ['a registered client id', 'local-abc'],
    ['a bare origin', 'https://app.example'],
    ['a URL with a fragment', 'https://app.example/client.json#x'],
    ['a URL with a user name', 'https://user@app.example/client.json'],
    ['another scheme', 'ftp://app.example/client.json'],
  ])('takes %s for no document at all', (_what, clientId) => {
    expect(isDocumentUrl(clientId)).toBe(false);
  });
});

describe('Client ID metadata documents: the fixed time of a failure', () => {
  it('names its bound in the one sentence of every failure: 3 s unless the server is given another', () => {
    expect(documentRefused()).toContain('answer 200 with JSON of at most 16 KiB within 3 s, without a redirect');
    expect(documentRefused(1_000)).toContain('answer 200 with JSON of at most 16 KiB within 1 s, without a redirect');
  });

  it('answers a failure it knows at once (a URL it never fetches) only after the fixed time it is given', async () => {
    const documents = clientIdDocuments({ accept: async () => true, failureAnswerMs: 300 });
    const started = performance.now();

    const outcome = await documents.load('https://127.0.0.1/client.json');

    expect(outcome).toEqual({ ok: false });
    expect(performance.now() - started).toBeGreaterThanOrEqual(299);
  });
});
