/**
 * The header our runtime client (runtime-client.ts) sends its token in, and the variable it is
 * given it in (it deletes it before loading the handler), which the stack's Runtime API
 * (runtime-api.ts) checks. A module of its own, importing nothing, so the runtime client's bundle,
 * which holds nothing but Node's modules and its own, can share it with the stack.
 */
export const RUNTIME_TOKEN = Object.freeze({ header: 'lambda-runtime-local-token', variable: 'LAMBDA_RUNTIME_LOCAL_TOKEN' });
