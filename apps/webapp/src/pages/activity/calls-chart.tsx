import type { AuditEventView } from '@letkite/protocol/api';

/** How a tool call ended, for the chart's colours. */
export type OutcomeKind = 'ok' | 'pending' | 'refused';

export function outcomeKind(outcome: string | null): OutcomeKind {
  if (outcome === null || outcome === 'ok') return 'ok';
  if (outcome === 'approval_pending') return 'pending';
  return 'refused';
}

const HOUR = 3_600_000;
const kinds: readonly OutcomeKind[] = ['ok', 'pending', 'refused'];
const labels: Record<OutcomeKind, string> = { ok: 'ok', pending: 'waiting for approval', refused: 'refused or failed' };

/** Tool calls per hour over the last `hours` hours, by outcome. */
export function callsPerHour(events: readonly AuditEventView[], now: Date, hours = 24) {
  const end = Math.ceil(now.getTime() / HOUR) * HOUR;
  const start = end - hours * HOUR;
  const buckets = Array.from({ length: hours }, (_, i) => ({
    start: new Date(start + i * HOUR),
    ok: 0,
    pending: 0,
    refused: 0,
  }));
  for (const e of events) {
    if (e.tool === null || !e.action.startsWith('tool.')) continue;
    const t = new Date(e.at).getTime();
    if (t < start || t >= end) continue;
    const b = buckets[Math.floor((t - start) / HOUR)];
    if (b) b[outcomeKind(e.outcome)]++;
  }
  return buckets;
}

/** A small stacked bar chart in plain SVG: one bar per hour, coloured by outcome. */
export function CallsChart(props: { events: readonly AuditEventView[]; now: Date }) {
  const buckets = callsPerHour(props.events, props.now);
  const max = Math.max(1, ...buckets.map((b) => b.ok + b.pending + b.refused));
  const width = 480;
  const height = 90;
  const bar = width / buckets.length;
  const total = buckets.reduce((n, b) => n + b.ok + b.pending + b.refused, 0);
  return (
    <figure className="calls-chart" data-testid="calls-chart">
      <svg viewBox={`0 0 ${width} ${height + 14}`} role="img" aria-label={`${total} tool calls in the last 24 hours`}>
        {buckets.map((b, i) => {
          let y = height;
          return (
            <g key={b.start.toISOString()}>
              <title>{`${b.start.toLocaleString()}: ${b.ok} ok, ${b.pending} waiting, ${b.refused} refused`}</title>
              {kinds.map((k) => {
                const h = (b[k] / max) * (height - 4);
                y -= h;
                return h > 0 ? (
                  <rect key={k} className={`bar-${k}`} x={i * bar + 1} y={y} width={bar - 2} height={h} />
                ) : null;
              })}
            </g>
          );
        })}
        <line x1={0} x2={width} y1={height} y2={height} className="axis" />
        <text x={0} y={height + 12} className="tick">
          24 h ago
        </text>
        <text x={width} y={height + 12} className="tick" textAnchor="end">
          now
        </text>
      </svg>
      <figcaption>
        Tool calls per hour ({total} in the last 24 hours, of those loaded):{' '}
        {kinds.map((k) => (
          <span key={k} className={`legend legend-${k}`}>
            {labels[k]}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
