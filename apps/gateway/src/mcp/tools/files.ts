import { layeredFileAccess } from '@letkite/policy';
import {
  deletePath,
  GitDiffResult,
  gitDiff,
  gitStatus,
  LetKiteError,
  listDir,
  ReadFileResult,
  readFile,
  type ToolDescriptor,
  writeFile,
} from '@letkite/protocol';
import type { z } from 'zod';
import { prepareMachineCall } from '../../machines/prepare-machine-call';
import { maskSecrets } from '../../output';
import { defineHandler, type ToolCallContext, type ToolHandler } from '../tool-handler';

/** File operations answer quickly; a slow disk or a big git repository gets this long. */
const FILE_OP_TIMEOUT_MS = 60_000;

/**
 * The gateway's part of a file call: resolve and check the machine, refuse early what the policy alone already
 * refuses (a path it hides answers exactly like a missing one), then let the agent decide on the real path.
 */
async function callFileOp(
  ctx: ToolCallContext,
  op: string,
  input: { machine: string; path: string; confirm?: boolean | undefined },
  mode: 'read' | 'write',
): Promise<unknown> {
  const { machine: ref, confirm, ...params } = input;
  ctx.audit.details = { path: input.path };
  const { machine, policy, clamped } = await prepareMachineCall(ctx, ref);
  // `~` in a rule means the run-as account's home, which only the agent knows: then the agent alone decides.
  const patterns = [...clamped.file_layers.flat().map((r) => r.path), ...clamped.deny];
  if (input.path.startsWith('/') && !patterns.some((p) => p.startsWith('~'))) {
    const access = layeredFileAccess(input.path, { layers: clamped.file_layers, deny: clamped.deny, home: '/' });
    if (access === 'none') throw new LetKiteError('not_found', `no such file: "${input.path}"`);
    if (mode === 'write' && access === 'ro') {
      throw new LetKiteError('blocked_by_policy', `"${input.path}" is read-only for this connection`, {
        layer: 'policy',
      });
    }
  }
  ctx.audit.decision = 'allow';
  return ctx.deps.hub.call(
    machine.id,
    op,
    params,
    { policy, confirm: confirm ?? false, actor: ctx.principal.actor },
    { timeoutMs: FILE_OP_TIMEOUT_MS, signal: ctx.signal },
  );
}

function passThrough<I extends z.ZodObject, O extends z.ZodObject>(
  descriptor: ToolDescriptor<I, O>,
  mode: 'read' | 'write',
): ToolHandler {
  return defineHandler(descriptor, async (input, ctx) => {
    const typed = input as { machine: string; path: string; confirm?: boolean };
    return (await callFileOp(ctx, descriptor.name, typed, mode)) as z.infer<O>;
  });
}

export const readFileHandler = defineHandler(readFile, async (input, ctx) => {
  const result = ReadFileResult.parse(await callFileOp(ctx, 'read_file', input, 'read'));
  if (result.encoding !== 'utf8') return { ...result, masked_count: 0 };
  // A masked file read back and written unchanged would lose its secrets: masked_count tells the AI.
  const masked = maskSecrets(result.content);
  return { ...result, content: masked.text, masked_count: masked.masked_count };
});

export const gitDiffHandler = defineHandler(gitDiff, async (input, ctx) => {
  const result = GitDiffResult.parse(await callFileOp(ctx, 'git_diff', input, 'read'));
  const masked = maskSecrets(result.diff);
  return { ...result, diff: masked.text, masked_count: masked.masked_count };
});

export const listDirHandler = passThrough(listDir, 'read');
export const gitStatusHandler = passThrough(gitStatus, 'read');
export const writeFileHandler = passThrough(writeFile, 'write');
export const deletePathHandler = passThrough(deletePath, 'write');
