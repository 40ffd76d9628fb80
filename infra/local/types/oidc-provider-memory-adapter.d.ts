/**
 * oidc-provider's own in-memory store (`oidc-provider/lib/adapters/memory_adapter.js`), imported
 * alone: @types/oidc-provider types only the package's entry. One instance per model; all share
 * the module's one bounded store.
 */
declare module 'oidc-provider/lib/adapters/memory_adapter.js' {
  import type { Adapter } from 'oidc-provider';
  export default class MemoryAdapter implements Adapter {
    constructor(model: string);
    upsert: Adapter['upsert'];
    find: Adapter['find'];
    findByUserCode: Adapter['findByUserCode'];
    findByUid: Adapter['findByUid'];
    consume: Adapter['consume'];
    destroy: Adapter['destroy'];
    revokeByGrantId: Adapter['revokeByGrantId'];
  }
}
