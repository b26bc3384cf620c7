import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_CEILING } from '@letkite/ceiling';
import { type AgentFrame, type AgentOp, agentOpNames, agentOps, type RequestContext } from '@letkite/protocol';
import { afterAll, describe, expect, expectTypeOf, test } from 'vitest';
import type { CeilingState } from '../ceiling/ceiling-source';
import { RequestStream } from '../request-stream';
import { TempJournal } from '../transfers/temp-journal';
import { AgentOps, type FeatureName, opFeatures } from '.';
import { featureLoaders } from './features';

const stateDir = mkdtempSync(join(tmpdir(), 'letkite-ops-'));
const deps = { stateDir, log: () => undefined, transfers: new TempJournal(null) };
const ops = new AgentOps(deps);

afterAll(() => {
  ops.close();
  rmSync(stateDir, { recursive: true, force: true });
});

const ceiling: CeilingState = { source: 'defaults', ceiling: DEFAULT_CEILING, path: '/nonexistent/ceiling.toml' };
const context: RequestContext = { policy: {}, actor: 'token:test' };

function request(op: string, params: unknown) {
  const sent: AgentFrame[] = [];
  return {
    id: 'r1',
    op,
    params,
    context,
    ceiling,
    send: (f: AgentFrame) => sent.push(f),
    signal: new AbortController().signal,
    stream: new RequestStream(() => false),
  };
}

describe('the agent op dispatcher', () => {
  test('every op of the protocol registry has a feature, whose schemas are those of the registry, with a handler', async () => {
    expectTypeOf<keyof typeof opFeatures>().toEqualTypeOf<AgentOp>();
    expect(Object.keys(opFeatures).sort()).toEqual([...agentOpNames].sort());
    const features = new Map<FeatureName, Awaited<ReturnType<(typeof featureLoaders)[FeatureName]>>>();
    try {
      for (const name of agentOpNames) {
        const featureName = opFeatures[name];
        const feature = features.get(featureName) ?? (await featureLoaders[featureName](deps));
        features.set(featureName, feature);
        const schemas = feature.schemas as Record<string, unknown>;
        const handlers = feature.handlers as Record<string, unknown>;
        expect(schemas[name], name).toBe(agentOps[name]);
        expect(typeof handlers[name], name).toBe('function');
      }
      // A feature serves the ops the map gives it and no other.
      for (const [featureName, feature] of features) {
        const served = agentOpNames.filter((op) => opFeatures[op] === featureName).sort();
        expect(Object.keys(feature.handlers).sort(), featureName).toEqual(served);
        expect(Object.keys(feature.schemas).sort(), featureName).toEqual(served);
      }
    } finally {
      for (const feature of features.values()) feature.close?.();
    }
  });

  test('a feature is made once, on its first request, and ends with close()', async () => {
    const made: FeatureName[] = [];
    const closed: FeatureName[] = [];
    const observed = Object.fromEntries(
      Object.entries(featureLoaders).map(([name, load]) => [
        name,
        async (d: typeof deps) => {
          made.push(name as FeatureName);
          const feature = await load(d);
          return {
            ...feature,
            close: () => {
              feature.close?.();
              closed.push(name as FeatureName);
            },
          };
        },
      ]),
    ) as unknown as typeof featureLoaders;
    const counting = new AgentOps(deps, observed);
    expect(made).toEqual([]);
    for (let i = 0; i < 3; i++) {
      await expect(counting.dispatch(request('job_status', { job_id: 'job_AAAAAAAAAAAAAAAA' }))).rejects.toMatchObject({
        code: 'not_found',
      });
    }
    await expect(counting.dispatch(request('exec', null))).rejects.toMatchObject({ code: 'invalid_params' });
    expect(made).toEqual(['jobs', 'exec']);
    counting.close();
    expect(closed.sort()).toEqual(['exec', 'jobs']);
    // After close, a request does not make a feature again: it is refused as the agent going away.
    await expect(counting.dispatch(request('list_dir', { path: '/' }))).rejects.toMatchObject({
      code: 'machine_offline',
    });
    expect(closed).toContain('files');
  });

  test("a group whose module file is gone (the agent's files replaced under it) says to restart, and is tried again", async () => {
    let attempts = 0;
    const gone = {
      ...featureLoaders,
      files: async () => {
        attempts++;
        // A real import of a chunk that is not there, as after an upgrade swapped the agent's directory.
        return (await import(join(stateDir, 'chunk-GONE.mjs'))) as never;
      },
    } as typeof featureLoaders;
    const replaced = new AgentOps(deps, gone);
    for (let i = 0; i < 2; i++) {
      await expect(replaced.dispatch(request('list_dir', { path: '/' }))).rejects.toMatchObject({
        code: 'internal',
        message: expect.stringContaining('restart it'),
      });
    }
    expect(attempts).toBe(2);
    replaced.close();
  });

  test('an op this agent does not know is unsupported, including names every object inherits', async () => {
    for (const op of ['rm_rf', 'toString', '__proto__', 'constructor', 'hasOwnProperty']) {
      await expect(ops.dispatch(request(op, {})), op).rejects.toMatchObject({ code: 'unsupported' });
    }
  });

  test('params that fail the registry schema are invalid_params naming the field, before any handler runs', async () => {
    await expect(ops.dispatch(request('job_status', { job_id: 'not a handle' }))).rejects.toMatchObject({
      code: 'invalid_params',
      details: { issues: [expect.objectContaining({ path: 'job_id' })] },
    });
    await expect(ops.dispatch(request('exec', null))).rejects.toMatchObject({ code: 'invalid_params' });
    await expect(
      ops.dispatch(request('exec', { command: 'true', timeout_ms: -1, max_output_bytes: 10 })),
    ).rejects.toMatchObject({
      code: 'invalid_params',
      details: { issues: [expect.objectContaining({ path: 'timeout_ms' })] },
    });
  });

  test('valid params reach the op: its handler answers (an unknown job is not_found)', async () => {
    await expect(ops.dispatch(request('job_status', { job_id: 'job_AAAAAAAAAAAAAAAA' }))).rejects.toMatchObject({
      code: 'not_found',
    });
    // The terminal manager checks the request's policy first ({} is none it accepts): its refusal, not the schema's.
    await expect(
      ops.dispatch(request('terminal_close', { terminal_id: 'term_AAAAAAAAAAAAAAAA' })),
    ).rejects.toMatchObject({ code: 'blocked_by_policy' });
  });
});
