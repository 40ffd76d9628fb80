import type { EndpointScope } from '../auth/endpoint-scope.js';
import type { ObservationsQuery } from '../contract/schemas.js';
import type { DeadlineContext } from '../deadline.js';
import type { Attribution } from './request.js';

/** Who asked, as far as the request got: known after the bearer token verified. */
export interface BrokeredCaller {
  subject: string | null;
  /** null until the tenant claim was read (and when the token has none). */
  tenantId: string | null;
  broker: string | null;
  /** The endpoint scope of the token (read with the tenant, before the broker is judged); `invalid` for a bad claim, which is refused. */
  scope: EndpointScope | 'invalid';
}

/**
 * The Lambda context of the observations function, carrying what the middlewares established, in
 * order: the caller (bearer, broker, tenant), then the query and attribution. The audit trail reads
 * whatever is there when the request ends.
 */
export interface ObservationsContext extends DeadlineContext {
  caller?: BrokeredCaller;
  query?: ObservationsQuery;
  attribution?: Attribution;
  /** Set once the request's audit item was written or its writing failed, so it is tried once. */
  auditSettled?: boolean;
}
