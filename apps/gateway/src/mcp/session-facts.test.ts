import { afterEach, expect, test } from 'vitest';
import { LocalCoordination } from '../coordination/local-coordination';
import { newMcpSessionId, SessionFactBook } from './session-facts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) await o.close();
});

test('a fact set on one gateway is known to another on the same coordination', async () => {
  const coordination = new LocalCoordination();
  const a = new SessionFactBook(coordination);
  const b = new SessionFactBook(coordination);
  open.push(a, b, coordination);
  const id = newMcpSessionId();
  expect(id).toMatch(/^mcs_[A-Za-z0-9_-]{22}$/);
  expect(b.get(id)).toEqual({});
  await a.set(id, { elicitationUrl: true });
  await a.set(id, { logLevel: 'info' });
  await coordination.events.flush();
  expect(a.get(id)).toEqual({ elicitationUrl: true, logLevel: 'info' });
  expect(b.get(id)).toEqual({ elicitationUrl: true, logLevel: 'info' });
});
