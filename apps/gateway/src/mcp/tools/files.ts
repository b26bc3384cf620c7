import { posix } from 'node:path';
import { fileAccess, layeredFileAccess } from '@letkite/policy';
import {
  deletePath,
  GitDiffResult,
  GitStatusResult,
  gitDiff,
  gitStatus,
  LetKiteError,
  ListDirResult,
  listDir,
  ReadFileWindowResult,
  readFile,
  type ToolDescriptor,
  writeFile,
} from '@letkite/protocol';
import type { z } from 'zod';
import { approvalProofContext, policyToolReason, requireApproval } from '../../approvals/gate';
import { prepareMachineCall } from '../../machines/prepare-machine-call';
import type { OutputMasker } from '../../output';
import { defineHandler, outputMaskerFor, type ToolCallContext, type ToolHandler } from '../tool-handler';

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
  extra: Record<string, unknown> = {},
): Promise<unknown> {
  const { machine: ref, confirm, ...rest } = input;
  const params = { ...rest, ...extra };
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
    ? (
        await requireApproval(ctx, {
          tool: op,
          machine,
          policy,
          args: input,
          reason: needsHuman,
          agent: { op, params, machines: [machine] },
        })
      ).approved
    : false;
  return ctx.deps.hub.call(
    machine.id,
    op,
    params,
    {
      policy,
      confirm: (confirm ?? false) || approved,
      approved,
      actor: ctx.principal.actor,
      ...approvalProofContext(ctx),
    },
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

/** Bytes read on each side of a read_file window, so a secret its edge cuts through is seen (and masked) whole. */
const READ_MARGIN_BYTES = 32 * 1024;

const utf8Strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const utf8Loose = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

function strictUtf8(bytes: Buffer): string | null {
  try {
    return utf8Strict.decode(bytes);
  } catch {
    return null;
  }
}

/**
 * Masks a read window together with the margin the agent read around it, then cuts the margin off again: the
 * content is masked before it is base64-encoded. Text (UTF-8, asked as utf8 or base64) is masked as text and
 * encoded again as it came; bytes that are not UTF-8 are masked as Latin-1 (one character per byte, so ASCII
 * secrets inside binary data are found) and the masked bytes encoded. `offset` and `length` stay the file's.
 */
function maskReadWindow(result: ReadFileWindowResult, masker: OutputMasker) {
  const { before: beforeB64, after: afterB64, ...rest } = result;
  const before = Buffer.from(beforeB64 ?? '', 'base64');
  const after = Buffer.from(afterB64 ?? '', 'base64');
  const bytes = result.encoding === 'utf8' ? null : Buffer.from(result.content, 'base64');
  const text = bytes === null ? result.content : strictUtf8(bytes);
  // The margin did not reach the file's start: a run there may begin mid-group.
  const cutAtStart = result.offset - before.length > 0;
  if (text !== null) {
    const head = utf8Loose.decode(before);
    const all = `${head}${text}${utf8Loose.decode(after)}`;
    const masked = masker.window(all, head.length, head.length + text.length, { cutAtStart });
    const content = bytes === null ? masked.text : Buffer.from(masked.text, 'utf8').toString('base64');
    return { ...rest, content, masked_count: masked.masked_count };
  }
  const head = before.toString('latin1');
  const body = (bytes as Buffer).toString('latin1');
  const all = `${head}${body}${after.toString('latin1')}`;
  const masked = masker.window(all, head.length, head.length + body.length, { cutAtStart });
  return { ...rest, content: Buffer.from(masked.text, 'latin1').toString('base64'), masked_count: masked.masked_count };
}

export const readFileHandler = defineHandler(readFile, async (input, ctx) => {
  const raw = await callFileOp(ctx, 'read_file', input, 'read', { margin: READ_MARGIN_BYTES });
  // A masked file read back and written unchanged would lose its secrets: masked_count tells the AI.
  return maskReadWindow(ReadFileWindowResult.parse(raw), await outputMaskerFor(ctx));
});

export const gitDiffHandler = defineHandler(gitDiff, async (input, ctx) => {
  const result = GitDiffResult.parse(await callFileOp(ctx, 'git_diff', input, 'read'));
  const masked = (await outputMaskerFor(ctx)).mask(result.diff);
  return { ...result, diff: masked.text, masked_count: masked.masked_count };
});

/** Names and paths can spell a secret too (a file named after a token): masked, which changes nothing else. */
export const listDirHandler = defineHandler(listDir, async (input, ctx) => {
  const result = ListDirResult.parse(await callFileOp(ctx, 'list_dir', input, 'read'));
  return (await outputMaskerFor(ctx)).maskValue(result);
});
export const gitStatusHandler = defineHandler(gitStatus, async (input, ctx) => {
  const result = GitStatusResult.parse(await callFileOp(ctx, 'git_status', input, 'read'));
  return (await outputMaskerFor(ctx)).maskValue(result);
});
export const writeFileHandler = passThrough(writeFile, 'write');
export const deletePathHandler = passThrough(deletePath, 'write');
