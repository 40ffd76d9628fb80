import { errors } from 'oidc-provider';
import { describe, expect, it } from 'vitest';
import { authorizationStore } from '../../local/authorization-store.js';

/**
 * The local authorization server's store (local/authorization-store.ts), as oidc-provider
 * calls it: a store per model, what a sign-in grants never pushed out by a flood of anything
 * else, a cap per client refusing in one sentence, and expiry on a clock the test moves.
 */

const LIMITS = { perClient: 2, total: 3, others: 5 };

function store() {
  // Any time but 0, which lru-cache reads as "no start time".
  let now = 1_000_000;
  const factory = authorizationStore(LIMITS, { now: () => now });
  return { factory, advance: (ms: number) => (now += ms) };
}

const grant = (client: string, n: number) => ({ clientId: client, accountId: `user-${n}` });
const refreshToken = (client: string, grantId: string) => ({ clientId: client, grantId });

describe('Local authorization store', () => {
  it('keeps refresh tokens and grants through a flood of sign-ins in progress and sessions (each kind in a store of its own)', async () => {
    const { factory } = store();
    await factory('Grant').upsert('g-1', grant('c', 1), 3600);
    await factory('RefreshToken').upsert('rt-1', refreshToken('c', 'g-1'), 3600);

    for (let i = 0; i < 100; i += 1) {
      await factory('Interaction').upsert(`i-${i}`, { uid: `i-${i}` }, 600);
      await factory('Session').upsert(`s-${i}`, { uid: `u-${i}` }, 600);
    }

    expect(await factory('RefreshToken').find('rt-1')).toMatchObject({ grantId: 'g-1' });
    expect(await factory('Grant').find('g-1')).toMatchObject({ accountId: 'user-1' });
    // The sign-ins in progress are bounded apart: the oldest left, the newest are there.
    expect(await factory('Interaction').find('i-0')).toBeUndefined();
    expect(await factory('Interaction').find('i-99')).toEqual({ uid: 'i-99' });
    expect(await factory('Session').findByUid('u-99')).toEqual({ uid: 'u-99' });
  });

  it('gives the same store however often a model is asked for (oidc-provider asks per model class, the server for its clients)', async () => {
    const { factory } = store();

    await factory('Client').upsert('https://app.example/client.json', { client_id: 'https://app.example/client.json' }, 0);

    expect(await factory('Client').find('https://app.example/client.json')).toEqual({ client_id: 'https://app.example/client.json' });
  });

  it('refuses a client its third grant in one sentence (an OAuth temporarily_unavailable), while another client still gets one', async () => {
    const { factory } = store();
    await factory('Grant').upsert('g-1', grant('c', 1), 3600);
    await factory('Grant').upsert('g-2', grant('c', 2), 3600);

    const third = factory('Grant').upsert('g-3', grant('c', 3), 3600);

    await expect(third).rejects.toBeInstanceOf(errors.TemporarilyUnavailable);
    await expect(third).rejects.toMatchObject({
      error_description:
        'The local authorization server keeps at most 2 grants for one client, and this client holds that many until some expire (or npm start restarts).',
    });
    await factory('Grant').upsert('g-other', grant('other', 1), 3600);
    expect(await factory('Grant').find('g-3')).toBeUndefined();
    expect(await factory('Grant').find('g-other')).toBeDefined();
  });

  it('refuses any client once the store holds its most in all, and an update of an entry it holds is no new one', async () => {
    const { factory } = store();
    await factory('Grant').upsert('g-a', grant('a', 1), 3600);
    await factory('Grant').upsert('g-b', grant('b', 1), 3600);
    await factory('Grant').upsert('g-c', grant('c', 1), 3600);

    await factory('Grant').upsert('g-a', { ...grant('a', 1), scope: 'more' }, 3600);

    await expect(factory('Grant').upsert('g-d', grant('d', 1), 3600)).rejects.toMatchObject({
      error: 'temporarily_unavailable',
      error_description:
        'The local authorization server keeps at most 3 grants in all, and holds that many until some expire (or npm start restarts).',
    });
    expect(await factory('Grant').find('g-a')).toMatchObject({ scope: 'more' });
  });

  it('frees a place when an entry expires or is destroyed', async () => {
    const { factory, advance } = store();
    await factory('Grant').upsert('g-1', grant('c', 1), 60);
    await factory('Grant').upsert('g-2', grant('c', 2), 3600);
    await factory('Grant').destroy('g-2');
    await factory('Grant').upsert('g-3', grant('c', 3), 3600);

    advance(61_000);
    await factory('Grant').upsert('g-4', grant('c', 4), 3600);

    expect(await factory('Grant').find('g-1')).toBeUndefined();
    expect(await factory('Grant').find('g-4')).toBeDefined();
  });

  it('refuses to use up a refresh token when the one replacing it could not be kept, so the token presented stays good', async () => {
    const { factory } = store();
    await factory('RefreshToken').upsert('rt-1', refreshToken('c', 'g-1'), 3600);
    await factory('RefreshToken').upsert('rt-2', refreshToken('c', 'g-2'), 3600);

    await expect(factory('RefreshToken').consume('rt-1')).rejects.toMatchObject({ error: 'temporarily_unavailable' });

    expect((await factory('RefreshToken').find('rt-1'))?.consumed).toBeUndefined();
  });

  it('marks a used refresh token, and revokes every token of a grant and nothing of another', async () => {
    const { factory } = store();
    await factory('RefreshToken').upsert('rt-1', refreshToken('c', 'g-1'), 3600);
    await factory('AuthorizationCode').upsert('code-1', refreshToken('c', 'g-1'), 60);
    await factory('RefreshToken').upsert('rt-other', refreshToken('other', 'g-2'), 3600);

    await factory('RefreshToken').consume('rt-1');
    const used = await factory('RefreshToken').find('rt-1');
    await factory('RefreshToken').revokeByGrantId('g-1');
    await factory('AuthorizationCode').revokeByGrantId('g-1');

    expect(used?.consumed).toEqual(expect.any(Number));
    expect(await factory('RefreshToken').find('rt-1')).toBeUndefined();
    expect(await factory('AuthorizationCode').find('code-1')).toBeUndefined();
    expect(await factory('RefreshToken').find('rt-other')).toBeDefined();
    // The places of the revoked tokens are free again.
    await factory('RefreshToken').upsert('rt-3', refreshToken('c', 'g-3'), 3600);
  });
});
