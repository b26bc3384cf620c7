import { expect, test } from 'vitest';
import { pureImportOffences } from '../../../test/support/import-guard';

// The protocol is shared by gateway, agent, CLI and (through its api subpath) the web app, so it does no I/O: no
// node: module, nothing from apps/ and no other workspace package (they all depend on this one). The api subpath
// has its stricter browser guard (api/guard.test.ts); this one covers every folder of the package.
const allowedWorkspacePackages: string[] = [];

test('src imports no node: module, nothing from apps/ and no workspace package', () => {
  const { sources, offending } = pureImportOffences(import.meta.dirname, allowedWorkspacePackages);
  expect(sources).toBeGreaterThan(20);
  // The one Buffer user: the agent↔gateway data frames are Node Buffers on both ends, and the web app never
  // reaches this file (api/guard.test.ts walks what it does reach).
  expect(offending).toEqual(['data-frame.ts: the Buffer global']);
});
