/**
 * `npm run token -- --tenant T [--sub S] [--expires-in SECONDS] [--audience A]`
 * Prints one bearer token signed by the local issuer, and nothing else. A negative --expires-in
 * gives an expired token; `--tenant ''` gives a token without the tenant claim.
 */
import './node-version.js'; // first: the AWS SDK's Node-version notice off on Node 20 (README, Node versions)
import { parseArgs } from 'node:util';
import { config } from '../../lib/config.js';
import { localIssuer } from './issuer.js';

const usage = 'usage: npm run token -- --tenant T [--sub S] [--expires-in SECONDS] [--audience A]';

try {
  // `--expires-in -60` must read as a negative number, not as another option.
  const args = process.argv.slice(2).flatMap((arg, i, all) =>
    arg === '--expires-in' && /^-[0-9]+$/.test(all[i + 1] ?? '') ? [] : i > 0 && all[i - 1] === '--expires-in' && /^-[0-9]+$/.test(arg) ? [`--expires-in=${arg}`] : [arg],
  );
  const { values } = parseArgs({
    args,
    options: {
      tenant: { type: 'string' },
      sub: { type: 'string', default: 'local-user' },
      'expires-in': { type: 'string', default: '3600' },
      audience: { type: 'string' },
    },
    strict: true,
  });
  if (values.tenant === undefined) throw new Error('--tenant is required');
  const expiresIn = Number(values['expires-in']);
  if (!Number.isInteger(expiresIn)) throw new Error('--expires-in must be a whole number of seconds');
  const cfg = config();
  const issuer = await localIssuer();
  const token = await issuer.sign({
    issuer: cfg.jwtIssuer,
    audience: values.audience ?? cfg.jwtAudience,
    tenant: values.tenant === '' ? undefined : values.tenant,
    tenantClaim: cfg.tenantClaim,
    subject: values.sub,
    expiresInSeconds: expiresIn,
  });
  process.stdout.write(`${token}\n`);
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n${usage}\n`);
  process.exit(2);
}
