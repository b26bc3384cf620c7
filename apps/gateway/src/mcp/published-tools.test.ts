import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
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

test('the published input schema accepts and refuses what the zod schema does (JSON Schema validator of the SDK)', () => {
  const validator = new AjvJsonSchemaValidator();
  const cases: [string, Record<string, unknown>][] = [
    ['exec', { machine: 'm', command: 'ls' }],
    ['exec', { machine: 'm', argv: ['ls'] }],
    ['exec', { machine: 'm' }],
    ['exec', { machine: 'm', command: 'ls', argv: ['ls'] }],
    ['exec', { machine: 'm', command: 'ls', timeout: 5 }],
    ['job_start', { machine: 'm', argv: ['sleep', '1'] }],
    ['job_start', { machine: 'm' }],
    ['exec_many', { label: 'web', command: 'ls' }],
    ['exec_many', { machines: ['a'], label: 'web', command: 'ls' }],
    ['exec_many', { machines: ['a'], command: 'ls', argv: ['ls'] }],
    ['exec_many', { command: 'ls' }],
    ['read_file', { machine: 'm', path: '/etc/hostname', lenght: 3 }],
  ];
  for (const [name, args] of cases) {
    const { descriptor } = toolHandlers.find((h) => h.descriptor.name === name) ?? {};
    if (!descriptor) throw new Error(`no tool ${name}`);
    const published = validator.getValidator(publishedTool(descriptor).inputSchema as never)(args).valid;
    expect(published, `${name} ${JSON.stringify(args)}`).toBe(descriptor.input.safeParse(args).success);
  }
});
