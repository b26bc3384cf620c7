/** Percentile of already-collected samples (nearest-rank). */
export function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

export function fmtMs(ms: number): string {
  return ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`;
}

export function summary(name: string, samples: number[]): { name: string; p50: number; p99: number; n: number } {
  return { name, p50: percentile(samples, 50), p99: percentile(samples, 99), n: samples.length };
}
