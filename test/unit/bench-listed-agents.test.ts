import { describe, expect, it } from 'vitest';
import { listedAgents } from '../../bench/inventory.js';

const answer = (agents: { agent_id: string; connection_state: string }[]): Buffer => Buffer.from(JSON.stringify(agents));

describe('bench: a br and a gzip answer compared by the agents they list, not their bytes', () => {
  it('takes two answers listing the same agents in the same order as the same, whatever their states', () => {
    const first = listedAgents(
      answer([
        { agent_id: 'a-1', connection_state: 'connected' },
        { agent_id: 'a-2', connection_state: 'connected' },
      ]),
    );
    const later = listedAgents(
      answer([
        { agent_id: 'a-1', connection_state: 'stale' },
        { agent_id: 'a-2', connection_state: 'connected' },
      ]),
    );
    expect(first).toEqual(later);
    expect(first.count).toBe(2);
  });

  it('tells apart an answer that lost an agent, or lists them in another order', () => {
    const both = listedAgents(
      answer([
        { agent_id: 'a-1', connection_state: 'connected' },
        { agent_id: 'a-2', connection_state: 'connected' },
      ]),
    );
    const one = listedAgents(answer([{ agent_id: 'a-1', connection_state: 'connected' }]));
    const swapped = listedAgents(
      answer([
        { agent_id: 'a-2', connection_state: 'connected' },
        { agent_id: 'a-1', connection_state: 'connected' },
      ]),
    );
    expect(one.count).toBe(1);
    expect(swapped.digest).not.toBe(both.digest);
  });
});
