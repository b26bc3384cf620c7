/**
 * Reads two V8 heap snapshots (.heapsnapshot JSON) and tells what the second holds more of, by kind of object:
 * the constructor name for objects and closures, the kind for strings, arrays, code and native memory. Divided by
 * the number of agents that connected between the two, that is each agent's live heap, object kind by kind.
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** Self size and count of every kind of object in one snapshot. */
export function heapByKind(file: string): Map<string, { count: number; bytes: number }> {
  const s = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const fields = s.snapshot.meta.node_fields;
  const types = s.snapshot.meta.node_types[0];
  const width = fields.length;
  const iType = fields.indexOf('type');
  const iName = fields.indexOf('name');
  const iSize = fields.indexOf('self_size');
  const out = new Map<string, { count: number; bytes: number }>();
  for (let i = 0; i < s.nodes.length; i += width) {
    const type = types[s.nodes[i + iType] as number] ?? '?';
    const name = s.strings[s.nodes[i + iName] as number] ?? '?';
    // Strings by kind, not by content; objects, closures and native objects by constructor.
    const kind =
      type === 'object' || type === 'closure' || type === 'native' || type === 'hidden' || type === 'object shape'
        ? `${type} ${name.length > 60 ? `${name.slice(0, 60)}…` : name}`
        : type;
    const k = out.get(kind) ?? { count: 0, bytes: 0 };
    k.count += 1;
    k.bytes += s.nodes[i + iSize] as number;
    out.set(kind, k);
  }
  return out;
}

/** The kinds that grew from `before` to `after`, largest growth first, per `per` (agents). */
export function heapGrowth(before: string, after: string, per: number, top = 40) {
  const a = heapByKind(before);
  const b = heapByKind(after);
  const rows = [...b].map(([kind, v]) => {
    const was = a.get(kind) ?? { count: 0, bytes: 0 };
    return { kind, count: (v.count - was.count) / per, bytes: (v.bytes - was.bytes) / per };
  });
  rows.sort((x, y) => y.bytes - x.bytes);
  const total = rows.reduce((sum, r) => sum + r.bytes, 0);
  return { total, rows: rows.slice(0, top) };
}
