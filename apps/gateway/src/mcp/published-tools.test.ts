import { expect, test } from 'vitest';
import { publishedTool } from './tool-handler';
import { toolHandlers } from './tools';

/**
 * The contract MCP clients see: every tool's name, annotations and JSON Schemas exactly as tools/list publishes
 * them. A change here is a contract change and shows up in review as a snapshot diff.
 */
test('every published tool matches its contract snapshot', () => {
  for (const handler of toolHandlers) {
    expect(publishedTool(handler.descriptor), handler.descriptor.name).toMatchSnapshot(handler.descriptor.name);
  }
});

test('tool names are unique and snake_case', () => {
  const names = toolHandlers.map((h) => h.descriptor.name);
  expect(new Set(names).size).toBe(names.length);
  for (const name of names) expect(name).toMatch(/^[a-z][a-z0-9_]*$/);
});

test('every tool that can change something says so in its annotations', () => {
  for (const { descriptor } of toolHandlers) {
    if (descriptor.annotations.readOnlyHint !== true) {
      expect(descriptor.annotations.destructiveHint, descriptor.name).toBeTypeOf('boolean');
    }
  }
});
