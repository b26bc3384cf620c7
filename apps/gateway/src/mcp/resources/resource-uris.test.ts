import { expect, test } from 'vitest';
import { parseResourceUri, resourceTemplates, templateKind } from './resource-uris';

test('every URI form parses to its view; anything else is not ours', () => {
  expect(parseResourceUri('letkite://machines')).toEqual({ kind: 'machines' });
  expect(parseResourceUri('letkite://shell-sessions')).toEqual({ kind: 'shell_sessions' });
  expect(parseResourceUri('letkite://machines/mch_abc')).toEqual({ kind: 'machine', id: 'mch_abc' });
  expect(parseResourceUri('letkite://terminals/term_12345678/screen')).toEqual({
    kind: 'terminal_screen',
    id: 'term_12345678',
  });
  expect(parseResourceUri('letkite://terminals/term_12345678/scrollback')?.kind).toBe('terminal_scrollback');
  expect(parseResourceUri('letkite://jobs/job_12345678/output')).toEqual({ kind: 'job_output', id: 'job_12345678' });
  for (const bad of [
    'letkite://machines/',
    'letkite://machines/a/b',
    'letkite://terminals/x/../screen',
    'letkite://jobs/j/output?x=1',
    'file:///etc/passwd',
    'letkite://terminals/%2e%2e/screen/extra',
  ]) {
    expect(parseResourceUri(bad), bad).toBeNull();
  }
});

test('each template names its view for completion', () => {
  expect(resourceTemplates.map((t) => templateKind(t.uriTemplate))).toEqual([
    'machine',
    'terminal_screen',
    'terminal_scrollback',
    'job_output',
  ]);
  expect(templateKind('letkite://nothing/{id}')).toBeNull();
});
