import { posix } from 'node:path';
import { fileAccess, layeredFileAccess } from '@letkite/policy';
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
import { policyToolReason, requireApproval } from '../../approvals/gate';
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
  const path = posix.normalize(input.path);
  if (path.startsWith('/') && !path.includes('\0') && !patterns.some((p) => p.startsWith('~'))) {
    const access = layeredFileAccess(path, { layers: clamped.file_layers, deny: clamped.deny, home: '/' });
    if (access === 'none') throw new LetKiteError('not_found', `no such file: "${input.path}"`);
    if (mode === 'write' && access === 'ro') {
      const policyAlone = fileAccess(path, { files: policy.files, deny: policy.deny, home: '/' });
      throw policyAlone === 'rw'
        ? new LetKiteError(
            'blocked_by_ceiling',
            `machine "${machine.name}"'s ceiling makes "${input.path}" read-only`,
            {
              layer: 'ceiling',
            },
          )
        : new LetKiteError('blocked_by_policy', `"${input.path}" is read-only for this connection`, {
            layer: 'policy',
          });
    }
  }
  const needsHuman = mode === 'write' ? policyToolReason(policy, op) : null;
  ctx.audit.decision = needsHuman ? 'approve' : 'allow';
  const approved = needsHuman
    ? (await requireApproval(ctx, { tool: op, machine, policy, args: input, reason: needsHuman })).approved
    : false;
  return ctx.deps.hub.call(
    machine.id,
    op,
    params,
    { policy, confirm: (confirm ?? false) || approved, approved, actor: ctx.principal.actor },
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
