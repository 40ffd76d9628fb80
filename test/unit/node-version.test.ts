import { describe, expect, it } from 'vitest';
import { quietSdkNodeVersionNotice, SDK_NODE_VERSION_WARNING_SWITCH } from '../../infra/node-version.js';

describe('Function: quietSdkNodeVersionNotice', () => {
  it('turns the SDK notice off on Node 20', () => {
    const env: NodeJS.ProcessEnv = {};

    quietSdkNodeVersionNotice(env, '20.19.0');

    expect(env).toEqual({ [SDK_NODE_VERSION_WARNING_SWITCH]: 'true' });
  });

  it('changes nothing on Node 22 and later, where the notice would be news', () => {
    const env: NodeJS.ProcessEnv = {};

    quietSdkNodeVersionNotice(env, '22.0.0');
    quietSdkNodeVersionNotice(env, '24.3.1');

    expect(env).toEqual({});
  });

  it('keeps a value someone set on purpose', () => {
    const env: NodeJS.ProcessEnv = { [SDK_NODE_VERSION_WARNING_SWITCH]: 'false' };

    quietSdkNodeVersionNotice(env, '20.19.0');

    expect(env[SDK_NODE_VERSION_WARNING_SWITCH]).toBe('false');
  });
});
