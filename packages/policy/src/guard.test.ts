import { expect, test } from 'vitest';
import { pureImportOffences } from '../../../test/support/import-guard';

// This package is pure (CONVENTIONS §2, §10): no node: modules and nothing from apps/. Of the workspace it may
// use only these; in particular never @letkite/ceiling, which depends on this package.
const allowedWorkspacePackages = ['@letkite/protocol', '@letkite/command-rules'];

test('src imports no node: module, nothing from apps/ and only the allowed workspace packages', () => {
  const { sources, offending } = pureImportOffences(import.meta.dirname, allowedWorkspacePackages);
  expect(sources).toBeGreaterThan(5);
  expect(offending).toEqual([]);
});
