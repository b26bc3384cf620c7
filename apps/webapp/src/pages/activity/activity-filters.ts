import type { AuditFilter } from '@letkite/protocol/api';
import { useCallback, useEffect, useState } from 'react';

/** The filter keys the activity page keeps in the URL (`/activity?tool=exec&machine=…`). */
export const filterKeys = ['since', 'until', 'person', 'connection', 'machine', 'tool', 'outcome', 'action'] as const;
export type FilterKey = (typeof filterKeys)[number];
export type Filters = Partial<Record<FilterKey, string>>;

/** The filters in a query string; unknown keys and empty values are dropped. */
export function filtersFrom(search: string): Filters {
  const q = new URLSearchParams(search);
  const out: Filters = {};
  for (const k of filterKeys) {
    const v = q.get(k)?.trim();
    if (v) out[k] = v;
  }
  return out;
}

/** The query string of a filter set, in a stable key order (so the same filters are the same URL). */
export function searchOf(f: Filters): string {
  const q = new URLSearchParams();
  for (const k of filterKeys) if (f[k]) q.set(k, f[k] as string);
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** The filters as the API takes them. */
export function apiFilter(f: Filters): AuditFilter {
  return { ...f } as AuditFilter;
}

/**
 * Filter state that lives in the URL: a filtered view is a link someone can send, the back button undoes a filter,
 * and the takeover e-mail's link opens the page already filtered.
 */
export function useUrlFilters(): [Filters, (next: Filters) => void] {
  const [filters, setFilters] = useState<Filters>(() => filtersFrom(window.location.search));
  useEffect(() => {
    const update = () => setFilters(filtersFrom(window.location.search));
    window.addEventListener('popstate', update);
    return () => window.removeEventListener('popstate', update);
  }, []);
  const set = useCallback((next: Filters) => {
    window.history.pushState(null, '', `${window.location.pathname}${searchOf(next)}`);
    setFilters(filtersFrom(searchOf(next)));
  }, []);
  return [filters, set];
}

/** `datetime-local` input value (local time) ↔ ISO instant. */
export function localInputOf(iso: string | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export function isoOfLocalInput(value: string): string | undefined {
  if (!value) return undefined;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}
