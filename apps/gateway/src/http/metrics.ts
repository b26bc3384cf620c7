import { cpuUsage, memoryUsage } from 'node:process';
import { Hono } from 'hono';

/**
 * The gateway's Prometheus metrics, in the text exposition format (version 0.0.4), written here rather than
 * through a client library: a handful of counters, gauges and histograms is all the gateway needs. Label values
 * are bounded (route patterns, tool names, error codes): never a path, a token or anything a client chose freely.
 */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

type Labels = Record<string, string>;

/** Request and tool-call latencies, in seconds: 5 ms … 60 s (tools wait on machines and on people). */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const;

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function labelText(labels: Labels): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}

function keyOf(names: readonly string[], labels: Labels): string {
  return JSON.stringify(names.map((n) => labels[n] ?? ''));
}

function pick(names: readonly string[], labels: Labels): Labels {
  const out: Labels = {};
  for (const n of names) out[n] = labels[n] ?? '';
  return out;
}

function num(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Number.POSITIVE_INFINITY) return '+Inf';
  if (v === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(v);
}

interface Metric {
  render(): string;
}

export class Counter implements Metric {
  private readonly values = new Map<string, { labels: Labels; value: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[] = [],
  ) {}

  inc(labels: Labels = {}, by = 1): void {
    const key = keyOf(this.labelNames, labels);
    const entry = this.values.get(key);
    if (entry) entry.value += by;
    else this.values.set(key, { labels: pick(this.labelNames, labels), value: by });
  }

  get(labels: Labels = {}): number {
    return this.values.get(keyOf(this.labelNames, labels))?.value ?? 0;
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const { labels, value } of this.values.values()) lines.push(`${this.name}${labelText(labels)} ${num(value)}`);
    return lines.join('\n');
  }
}

/** A gauge read when scraped (agents online, RSS …). */
export class Gauge implements Metric {
  private last: number | null = null;
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly read: () => number | Promise<number>,
    /** A value that only grows but is read from elsewhere (CPU seconds) is a counter to Prometheus. */
    private readonly type: 'gauge' | 'counter' = 'gauge',
  ) {}

  async collect(): Promise<void> {
    try {
      this.last = await this.read();
    } catch {
      this.last = null;
    }
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} ${this.type}`];
    if (this.last !== null) lines.push(`${this.name} ${num(this.last)}`);
    return lines.join('\n');
  }
}

export class Histogram implements Metric {
  private readonly series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[] = [],
    readonly buckets: readonly number[] = DURATION_BUCKETS,
  ) {}

  observe(labels: Labels, value: number): void {
    const key = keyOf(this.labelNames, labels);
    let s = this.series.get(key);
    if (!s) {
      s = { labels: pick(this.labelNames, labels), counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.series.set(key, s);
    }
    for (let i = 0; i < this.buckets.length; i++)
      if (value <= (this.buckets[i] as number)) s.counts[i] = (s.counts[i] ?? 0) + 1;
    s.sum += value;
    s.count++;
  }

  count(labels: Labels = {}): number {
    return this.series.get(keyOf(this.labelNames, labels))?.count ?? 0;
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const { labels, counts, sum, count } of this.series.values()) {
      this.buckets.forEach((le, i) => {
        lines.push(`${this.name}_bucket${labelText({ ...labels, le: num(le) })} ${counts[i]}`);
      });
      lines.push(`${this.name}_bucket${labelText({ ...labels, le: '+Inf' })} ${count}`);
      lines.push(`${this.name}_sum${labelText(labels)} ${num(sum)}`);
      lines.push(`${this.name}_count${labelText(labels)} ${count}`);
    }
    return lines.join('\n');
  }
}

/** What the gauges read when scraped; each is optional so an app test can leave out what it does not build. */
export interface MetricsSources {
  agentsOnline?: () => number;
  approvalsPending?: () => Promise<number>;
}

/** The gateway's metrics: one instance per running gateway (so two gateways in one process do not mix). */
export class GatewayMetrics {
  readonly httpRequests = new Counter('letkite_http_requests_total', 'HTTP requests answered, by route and status.', [
    'method',
    'route',
    'status',
  ]);
  readonly httpDuration = new Histogram(
    'letkite_http_request_duration_seconds',
    'Time to answer an HTTP request (until the response starts; streams are not timed to their end).',
    ['method', 'route'],
  );
  readonly toolCalls = new Counter(
    'letkite_tool_calls_total',
    'MCP tool calls, by tool and outcome (ok, approval_pending or the error code).',
    ['tool', 'outcome'],
  );
  readonly toolDuration = new Histogram('letkite_tool_call_duration_seconds', 'MCP tool call duration.', ['tool']);
  private readonly gauges: Gauge[];
  private readonly startedAt = Date.now() / 1000;

  constructor(private sources: MetricsSources = {}) {
    this.gauges = [
      new Gauge(
        'letkite_agents_online',
        'Agents holding a socket to this gateway.',
        () => this.sources.agentsOnline?.() ?? 0,
      ),
      new Gauge(
        'letkite_approvals_pending',
        'Approval requests waiting for a person.',
        async () => (await this.sources.approvalsPending?.()) ?? 0,
      ),
      new Gauge('process_resident_memory_bytes', 'Resident memory size in bytes.', () => memoryUsage.rss()),
      new Gauge(
        'process_cpu_seconds_total',
        'Total user and system CPU time spent in seconds.',
        () => {
          const u = cpuUsage();
          return (u.user + u.system) / 1e6;
        },
        'counter',
      ),
      new Gauge('process_start_time_seconds', 'Start time of the process since the Unix epoch in seconds.', () =>
        Math.round(this.startedAt),
      ),
      new Gauge('nodejs_heap_used_bytes', 'V8 heap in use, in bytes.', () => memoryUsage().heapUsed),
    ];
  }

  /** Late binding: the hub and the approvals exist only once the gateway is composed. */
  setSources(sources: MetricsSources): void {
    this.sources = { ...this.sources, ...sources };
  }

  request(method: string, route: string, status: number, seconds: number): void {
    this.httpRequests.inc({ method, route, status: String(status) });
    this.httpDuration.observe({ method, route }, seconds);
  }

  toolCall(tool: string, outcome: string, seconds: number): void {
    this.toolCalls.inc({ tool, outcome });
    this.toolDuration.observe({ tool }, seconds);
  }

  /** The exposition text. A gauge whose source fails is left without a sample rather than failing the scrape. */
  async render(): Promise<string> {
    await Promise.all(this.gauges.map((g) => g.collect()));
    const metrics: Metric[] = [this.httpRequests, this.httpDuration, this.toolCalls, this.toolDuration, ...this.gauges];
    return `${metrics.map((m) => m.render()).join('\n')}\n`;
  }
}

/** GET /metrics. Served on its own listener (LETKITE_METRICS_PORT), never on the public port. */
export function metricsRoutes(metrics: GatewayMetrics): Hono {
  const app = new Hono();
  app.get('/metrics', async (c) => c.body(await metrics.render(), 200, { 'Content-Type': PROMETHEUS_CONTENT_TYPE }));
  return app;
}
