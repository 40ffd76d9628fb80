import { LRUCache } from 'lru-cache';
import { type Adapter, type AdapterFactory, type AdapterPayload, errors } from 'oidc-provider';

/**
 * Where the local authorization server (oidc-provider) keeps its state: in memory, forgotten at a
 * restart as a development server may, in one store per model (oidc-provider's own in-memory
 * adapter shares one bounded store between all of them, so a flood of authorization requests
 * pushed out refresh tokens, and a rotated refresh token that is no longer found cannot end its
 * grant when it is reused).
 * - What a sign-in grants (grants, authorization codes, refresh tokens) is never pushed out before
 *   it expires: a used refresh token must still be found when it is presented again. These stores
 *   are bounded by a cap per client and one in all instead, and a full store refuses the next
 *   entry with one sentence (an OAuth `temporarily_unavailable` error).
 * - Everything else (sign-ins in progress, browser sessions, registered clients) is bounded apart,
 *   the least recently used leaving first: a flood of one kind of request pushes out its own kind.
 * Access tokens are JWTs here, kept nowhere.
 */

export interface StoreLimits {
  /** Entries of one granted kind one client may hold. */
  perClient: number;
  /** Entries of one granted kind in all. */
  total: number;
  /** Entries of any other kind (the least recently used leave first). */
  others: number;
}

export const STORE_LIMITS: StoreLimits = Object.freeze({ perClient: 1_000, total: 20_000, others: 10_000 });

/** The kinds a sign-in grants, by model, as a refusal names them. */
const GRANTED: Readonly<Record<string, string>> = Object.freeze({
  Grant: 'grants',
  AuthorizationCode: 'authorization codes',
  RefreshToken: 'refresh tokens',
  AccessToken: 'access tokens',
  DeviceCode: 'device codes',
  BackchannelAuthenticationRequest: 'backchannel requests',
});

interface Entry {
  payload: AdapterPayload;
  client: string;
  grantId: string | undefined;
}

const epochSeconds = (): number => Math.floor(Date.now() / 1000);

/** One model's store, as oidc-provider's adapter interface reads and writes it. */
class ModelStore implements Adapter {
  private readonly entries: LRUCache<string, Entry>;
  private readonly perClient = new Map<string, number>();
  private readonly byGrant = new Map<string, Set<string>>();
  /** Sessions are also found by their uid, device codes by their user code. */
  private readonly byUid: LRUCache<string, string>;
  private readonly byUserCode: LRUCache<string, string>;
  private readonly granted: string | undefined;

  constructor(
    private readonly model: string,
    private readonly limits: StoreLimits,
    perf: { now(): number } | undefined,
  ) {
    this.granted = GRANTED[model];
    const max = this.granted ? limits.total + 1 : limits.others;
    this.entries = new LRUCache<string, Entry>({
      max,
      ...(perf ? { perf } : {}),
      ttlResolution: 0,
      // A replaced entry keeps its place in the counts; any other that leaves gives its place back.
      dispose: (entry, id, reason) => {
        if (reason !== 'set') this.forget(id, entry);
      },
    });
    this.byUid = new LRUCache({ max, ...(perf ? { perf } : {}), ttlResolution: 0 });
    this.byUserCode = new LRUCache({ max, ...(perf ? { perf } : {}), ttlResolution: 0 });
  }

  private forget(id: string, entry: Entry): void {
    const count = (this.perClient.get(entry.client) ?? 1) - 1;
    if (count > 0) this.perClient.set(entry.client, count);
    else this.perClient.delete(entry.client);
    if (entry.grantId === undefined) return;
    const ids = this.byGrant.get(entry.grantId);
    ids?.delete(id);
    if (ids?.size === 0) this.byGrant.delete(entry.grantId);
  }

  /** Room for one more granted entry of `client`, expired ones let go first; refused in one sentence when there is none. */
  private makeRoom(client: string): void {
    const full = (): boolean => (this.perClient.get(client) ?? 0) >= this.limits.perClient || this.entries.size >= this.limits.total;
    if (full()) this.entries.purgeStale();
    if ((this.perClient.get(client) ?? 0) >= this.limits.perClient) {
      throw new errors.TemporarilyUnavailable(
        `The local authorization server keeps at most ${this.limits.perClient} ${this.granted} for one client, and this client holds that many until some expire (or npm start restarts).`,
      );
    }
    if (this.entries.size >= this.limits.total) {
      throw new errors.TemporarilyUnavailable(
        `The local authorization server keeps at most ${this.limits.total} ${this.granted} in all, and holds that many until some expire (or npm start restarts).`,
      );
    }
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    const client = typeof payload.clientId === 'string' ? payload.clientId : '';
    const grantId = this.granted && typeof payload.grantId === 'string' ? payload.grantId : undefined;
    const replacing = this.entries.peek(id, { allowStale: true }) !== undefined;
    if (this.granted && !replacing) this.makeRoom(client);
    const ttl = expiresIn > 0 ? expiresIn * 1000 : undefined;
    this.entries.set(id, { payload, client, grantId }, ttl === undefined ? {} : { ttl });
    if (replacing) return;
    this.perClient.set(client, (this.perClient.get(client) ?? 0) + 1);
    if (grantId !== undefined) {
      const ids = this.byGrant.get(grantId) ?? new Set<string>();
      ids.add(id);
      this.byGrant.set(grantId, ids);
    }
    if (typeof payload.uid === 'string') this.byUid.set(payload.uid, id, ttl === undefined ? {} : { ttl });
    if (typeof payload.userCode === 'string') this.byUserCode.set(payload.userCode, id, ttl === undefined ? {} : { ttl });
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    return this.entries.get(id)?.payload;
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const id = this.byUid.get(uid);
    return id === undefined ? undefined : this.find(id);
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    const id = this.byUserCode.get(userCode);
    return id === undefined ? undefined : this.find(id);
  }

  /**
   * Marks an entry used. oidc-provider consumes a refresh token before it saves the one that
   * replaces it: the room for that one is made first, so a full store refuses the refresh while
   * the token presented is still good, rather than after it was used up.
   */
  async consume(id: string): Promise<void> {
    const entry = this.entries.get(id);
    if (!entry) return;
    if (this.model === 'RefreshToken') this.makeRoom(entry.client);
    entry.payload.consumed = epochSeconds();
  }

  async destroy(id: string): Promise<void> {
    this.entries.delete(id);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    for (const id of [...(this.byGrant.get(grantId) ?? [])]) this.entries.delete(id);
  }
}

/**
 * oidc-provider's adapter factory (its `adapter` setting): one store per model, the same store
 * however many times a model's adapter is asked for (the server also writes clients of metadata
 * documents into the `Client` store). `perf` is the clock of the expiries (tests).
 */
export function authorizationStore(limits: StoreLimits = STORE_LIMITS, perf?: { now(): number }): AdapterFactory {
  const stores = new Map<string, ModelStore>();
  return (model) => {
    let store = stores.get(model);
    if (!store) {
      store = new ModelStore(model, limits, perf);
      stores.set(model, store);
    }
    return store;
  };
}
