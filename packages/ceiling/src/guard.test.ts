import { expect, test } from 'vitest';
import { pureImportOffences } from '../../../test/support/import-guard';

// This package is pure (CONVENTIONS §2, §10): no node: modules and nothing from apps/. Of the workspace it uses
// only these, so the dependency direction stays ceiling → policy → command-rules.
// command-rules: judgeCommand evaluates a clamped policy's commands the same way on gateway and agent.
const allowedWorkspacePackages = ['@letkite/protocol', '@letkite/policy', '@letkite/command-rules'];

test('src imports no node: module, nothing from apps/ and only the allowed workspace packages', () => {
  const { sources, offending } = pureImportOffences(import.meta.dirname, allowedWorkspacePackages);
  expect(sources).toBeGreaterThan(5);
  expect(offending).toEqual([]);
});
