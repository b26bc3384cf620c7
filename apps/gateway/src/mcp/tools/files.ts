import {
  type AgentOpParams,
  type AgentOpResult,
  deletePath,
  gitDiff,
  gitStatus,
  listDir,
  type ReadFileWindowResult,
  readFile,
  type ToolDescriptor,
  writeFile,
} from '@letkite/protocol';
import type { z } from 'zod';
import { policyToolReason, requireApproval } from '../../approvals/gate';
import { checkPath } from '../../files/check-path';
import { prepareMachineCall } from '../../machines/prepare-machine-call';
import type { OutputMasker } from '../../output';
import { defineHandler, outputMaskerFor, type ToolCallContext, type ToolHandler } from '../tool-handler';

type FileOp = 'read_file' | 'list_dir' | 'write_file' | 'delete_path' | 'git_status' | 'git_diff';

/** File operations answer quickly; a slow disk or a big git repository gets this long. */
const FILE_OP_TIMEOUT_MS = 60_000;

/**
 * The gateway's part of a file call: resolve and check the machine, refuse early what the policy alone already
 * refuses (a path it hides answers exactly like a missing one), then let the agent decide on the real path.
 */
async function callFileOp<K extends FileOp>(
  ctx: ToolCallContext,
  op: K,
  input: { machine: string; path: string; confirm?: boolean | undefined },
  mode: 'read' | 'write',
  extra: Record<string, unknown> = {},
): Promise<AgentOpResult<K>> {
  const { machine: ref, confirm, ...rest } = input;
  // The tool's input minus machine and confirm is the op's params (the agent parses them against the registry).
  const params = { ...rest, ...extra } as AgentOpParams<K>;
  ctx.audit.details = { path: input.path };
  const prepared = await prepareMachineCall(ctx, ref);
  const { machine, policy } = prepared;
  checkPath(prepared, input.path, mode);
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
  return prepared.call(op, params, { confirm: confirm ?? false, approved, timeoutMs: FILE_OP_TIMEOUT_MS });
}

function passThrough<I extends z.ZodObject, O extends z.ZodObject>(
  descriptor: ToolDescriptor<I, O>,
  mode: 'read' | 'write',
): ToolHandler {
  return defineHandler(descriptor, async (input, ctx) => {
    const typed = input as { machine: string; path: string; confirm?: boolean };
    return (await callFileOp(ctx, descriptor.name as FileOp, typed, mode)) as z.infer<O>;
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
  const window = await callFileOp(ctx, 'read_file', input, 'read', { margin: READ_MARGIN_BYTES });
  // A masked file read back and written unchanged would lose its secrets: masked_count tells the AI.
  return maskReadWindow(window, await outputMaskerFor(ctx));
});

export const gitDiffHandler = defineHandler(gitDiff, async (input, ctx) => {
  const result = await callFileOp(ctx, 'git_diff', input, 'read');
  const masked = (await outputMaskerFor(ctx)).mask(result.diff);
  return { ...result, diff: masked.text, masked_count: masked.masked_count };
});

/** Names and paths can spell a secret too (a file named after a token): masked, which changes nothing else. */
export const listDirHandler = defineHandler(listDir, async (input, ctx) => {
  const result = await callFileOp(ctx, 'list_dir', input, 'read');
  return (await outputMaskerFor(ctx)).maskValue(result);
});
export const gitStatusHandler = defineHandler(gitStatus, async (input, ctx) => {
  const result = await callFileOp(ctx, 'git_status', input, 'read');
  return (await outputMaskerFor(ctx)).maskValue(result);
});
export const writeFileHandler = passThrough(writeFile, 'write');
export const deletePathHandler = passThrough(deletePath, 'write');
