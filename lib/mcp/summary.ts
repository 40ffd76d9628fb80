import type { EndpointList } from '../contract/mcp-tools.js';
import type { AgentSummary, EndpointDashboard } from '../contract/schemas.js';

/**
 * The short texts that accompany the tools' structured results, for hosts and models that read
 * only text. They keep the three rules in words: missing data is "unknown" (never "healthy" or
 * "ok"), a null value is "not reported" (never 0), and nothing here is said about a failed read,
 * which never reaches a summary (it is an error result).
 */

function percent(value: number): string {
  return `${Number.isInteger(value) ? value : value.toFixed(1)}%`;
}

/** A dashboard in a few lines: status, each metric (or why it is unknown), the findings, the times. */
export function summarizeDashboard(d: EndpointDashboard): string {
  const who = `Endpoint ${d.endpoint.id} (${d.endpoint.hostname}, ${d.endpoint.os})`;
  const lines = [`${who}: overall status ${d.status}, evaluated at ${d.evaluated_at} over the last ${d.window_minutes} minutes.`];
  if (d.metrics === null) {
    lines.push('Metrics: unknown. The endpoint has never reported an observation within retention, so nothing is known about its health.');
  } else if (d.observed_at === null) {
    lines.push(`Metrics: unknown. No observation in the last ${d.window_minutes} minutes, so its current health is not known.`);
  } else {
    const metrics = d.metrics.map((m) => (m.value === null ? `${m.label} unknown (not reported)` : `${m.label} ${percent(m.value)} (${m.status})`));
    lines.push(`Metrics from the observation at ${d.observed_at}${d.expires_at ? `, current until ${d.expires_at}` : ''}: ${metrics.join('; ')}.`);
  }
  if (d.findings && d.findings.length > 0) {
    lines.push(`Findings: ${d.findings.map((f) => `${f.label} (${f.status}): ${f.detail}`).join(' ')}`);
  } else {
    lines.push('Findings: none.');
  }
  if (d.history !== null) lines.push(`History: ${d.history.length} sample${d.history.length === 1 ? '' : 's'} in the window.`);
  return lines.join('\n');
}

function describeAgent(a: AgentSummary): string {
  return `- ${a.agent_id}: ${a.hostname} (${a.os}/${a.arch}, version ${a.version}), ${a.connection_state.replace('_', ' ')}${a.last_heartbeat ? `, last heartbeat ${a.last_heartbeat}` : ''}`;
}

/** An endpoint list: how many match of how many, then one line per returned endpoint. */
export function summarizeEndpointList(list: EndpointList, filters: { connection_state?: string | undefined; hostname?: string | undefined }): string {
  const conditions = [
    filters.connection_state ? `connection state ${filters.connection_state}` : undefined,
    filters.hostname !== undefined ? `hostname containing "${filters.hostname}"` : undefined,
  ].filter((c): c is string => c !== undefined);
  const scope = conditions.length > 0 ? ` with ${conditions.join(' and ')}` : '';
  if (list.total === 0) return 'The tenant has no endpoints.';
  if (list.matching === 0) return `No endpoint${scope} (the tenant has ${list.total}).`;
  const head = `${list.matching} of ${list.total} endpoints${scope}${list.truncated ? `; the first ${list.endpoints.length} by agent_id` : ''}:`;
  return [head, ...list.endpoints.map(describeAgent)].join('\n');
}
