import { afterAll, describe, it } from 'vitest';
import { freePort, freshStartEnv, killStarted, npmStart, portIsOpen, waitFor } from '../helpers/npm-start.js';

/**
 * `npm start` as npm runs it (`npm run -s start`), stopped by each signal a terminal or a process
 * manager sends: the whole stack stops and every port it held is free again (starting it:
 * start-lifecycle.test.ts). The tests run at the same time, each on its own ports and folders.
 */

afterAll(killStarted);

describe.concurrent('E2E: stopping npm start', () => {
  it.for<NodeJS.Signals>(['SIGTERM', 'SIGINT', 'SIGHUP'])(
    '%s to `npm start` stops the whole stack and frees every port',
    { timeout: 120_000 },
    async (signal, { expect }) => {
      const [port, privatePort, dynamoPort] = [await freePort(), await freePort(), await freePort()];
      const run = npmStart(
        {
          ...(await freshStartEnv()),
          PORT: String(port),
          PRIVATE_PORT: String(privatePort),
          DYNAMODB_PORT: String(dynamoPort),
          SEED: 'none',
        },
        true,
      );
      await waitFor(run, 'Stop with Ctrl-C');
      expect([await portIsOpen(port), await portIsOpen(privatePort), await portIsOpen(dynamoPort)]).toEqual([true, true, true]);

      run.child.kill(signal);
      await run.exited;
      const deadline = Date.now() + 10_000;
      let open = [true, true, true];
      while (open.some(Boolean) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        open = [await portIsOpen(port), await portIsOpen(privatePort), await portIsOpen(dynamoPort)];
      }

      expect(open).toEqual([false, false, false]);
    },
  );
});
