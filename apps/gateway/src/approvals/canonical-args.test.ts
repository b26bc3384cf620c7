import { describe, expect, test } from 'vitest';
import { boundArguments, canonicalJson, machineSetId, policyVersion } from './canonical-args';
import { machineSetTarget } from './gate';

describe('canonicalJson', () => {
  test('sorts keys at every depth and drops undefined members', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: undefined, x: 2 }], c: 'x' } })).toBe(
      '{"a":{"c":"x","d":[3,{"x":2,"z":1}]},"b":1}',
    );
  });

  test('key order in the input does not change the bytes', () => {
    expect(canonicalJson({ command: 'ls', cwd: '/tmp' })).toBe(canonicalJson({ cwd: '/tmp', command: 'ls' }));
  });

  test('control, invisible and astral characters each keep one spelling', () => {
    expect(canonicalJson('a\nb\u202e\u0000😀')).toBe('"a\\nb\u202e\\u0000😀"');
    expect(canonicalJson('\ud800')).toBe('"\\ud800"');
    expect(canonicalJson('\ud800')).not.toBe(canonicalJson('\ufffd'));
  });

  test('numbers that are not finite cannot be hashed', () => {
    expect(() => canonicalJson({ n: Number.NaN })).toThrow(TypeError);
    expect(() => canonicalJson(1n)).toThrow(TypeError);
  });
});

describe('boundArguments', () => {
  test('machine and confirm are not part of the binding', () => {
    const a = boundArguments({ machine: 'web1', command: 'git push', confirm: true });
    const b = boundArguments({ machine: 'mch_123', command: 'git push' });
    expect(a).toEqual(b);
    expect(a.json).toBe('{"command":"git push"}');
  });

  test.each([
    [{ command: 'git push' }, { command: 'git push ' }],
    [{ command: 'ls' }, { argv: ['ls'] }],
    [{ argv: ['a', 'b'] }, { argv: ['b', 'a'] }],
    [
      { command: 'x', env: { A: '1' } },
      { command: 'x', env: { A: '2' } },
    ],
    [
      { path: '/a', content: 'x' },
      { path: '/a', content: 'x', mode: '0644' },
    ],
  ])('%j and %j hash differently', (a, b) => {
    expect(boundArguments(a).sha256).not.toBe(boundArguments(b).sha256);
  });

  test('the hash is the SHA-256 of the canonical JSON', () => {
    expect(boundArguments({}).sha256).toBe('44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a');
  });
});

describe('policyVersion', () => {
  test('changes with any setting and not with key order', () => {
    const p = { name: 'ops', shell: 'full', approval: { tools: ['write_file'], timeout: 600_000 } };
    expect(policyVersion(p)).toBe(
      policyVersion({ approval: { timeout: 600_000, tools: ['write_file'] }, shell: 'full', name: 'ops' }),
    );
    expect(policyVersion(p)).not.toBe(policyVersion({ ...p, shell: 'sandboxed' }));
  });
});

describe('machineSetId', () => {
  test('is the same for any order and repetition of the same machines', () => {
    const id = machineSetId(['mch_b', 'mch_a', 'mch_c']);
    expect(id).toMatch(/^set_[0-9a-f]{64}$/);
    expect(machineSetId(['mch_c', 'mch_a', 'mch_b', 'mch_a'])).toBe(id);
  });

  test.each([
    [
      ['mch_a', 'mch_b'],
      ['mch_a', 'mch_b', 'mch_c'],
    ],
    [['mch_a', 'mch_b'], ['mch_a']],
    [
      ['mch_a', 'mch_b'],
      ['mch_a', 'mch_x'],
    ],
    [['mch_a'], ['mch_a ']],
  ])('%j and %j are different sets', (a, b) => {
    expect(machineSetId(a)).not.toBe(machineSetId(b));
  });

  test('never equals a machine id', () => {
    expect(machineSetId(['mch_a'])).not.toBe('mch_a');
  });
});

describe('machineSetTarget', () => {
  test('binds the set id and names every machine for the approver', () => {
    const t = machineSetTarget([
      { id: 'mch_2', name: 'web2' },
      { id: 'mch_1', name: 'web1' },
      { id: 'mch_3', name: 'db' },
    ]);
    expect(t).toEqual({ id: machineSetId(['mch_1', 'mch_2', 'mch_3']), name: '3 machines: db, web1, web2' });
    expect(() => machineSetTarget([])).toThrow(TypeError);
  });
});
