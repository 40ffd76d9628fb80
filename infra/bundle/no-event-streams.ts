/**
 * Stands in for `@smithy/core/event-streams` in the Lambda bundles (infra/build.ts maps the one onto
 * the other). The SDK loads event-stream support only for operations that stream events, and
 * DynamoDB has none; bundled, the dynamic import inlines 13 KiB that never run.
 *
 * Invariant: the two names the SDK imports exist, and using either says why it cannot work rather
 * than failing somewhere deeper.
 */
function unavailable(): never {
  throw new Error('event streams are not bundled: DynamoDB has no event-stream operations (infra/bundle/no-event-streams.ts)');
}

export class EventStreamSerde {
  constructor() {
    unavailable();
  }
}

export const eventStreamSerdeProvider = (): never => unavailable();
