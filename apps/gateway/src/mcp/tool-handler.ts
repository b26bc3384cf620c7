import { type ErrorCode, LetKiteError, PendingApproval, type ToolDescriptor, toLetKiteError } from '@letkite/protocol';
import { z } from 'zod';
import { PendingApprovalAnswer } from '../approvals/pending-answer';
import type { Principal } from '../auth/principal';
import type { GatewayDeps } from '../deps';
import { createOutputMasker, type OutputMasker } from '../output';

/** What one tool call knows besides its input. */
export interface ToolCallContext {
  deps: GatewayDeps;
  principal: Principal;
  /** Aborted when the client cancels the request or the session closes. */
  signal: AbortSignal;
  /** Sends an MCP progress notification when the client asked for progress; a no-op otherwise. */
  progress: (progress: number, total?: number, message?: string) => Promise<void>;
  /** The MCP client as it named itself in `initialize` (unverified: shown as declared by the client). */
  client?: { name: string; version?: string };
  /** Filled by the handler for the audit record written after the call. */
  audit: { target?: string; decision?: string; details?: Record<string, unknown> };
}

export interface ToolHandler {
  descriptor: ToolDescriptor;
  run(input: unknown, ctx: ToolCallContext): Promise<unknown>;
}

/** Binds a descriptor to its implementation; the input arrives already validated by the descriptor's schema. */
export function defineHandler<I extends z.ZodObject, O extends z.ZodObject>(
  descriptor: ToolDescriptor<I, O>,
  run: (input: z.infer<I>, ctx: ToolCallContext) => Promise<z.infer<O>>,
): ToolHandler {
  return { descriptor, run: (input, ctx) => run(input as z.infer<I>, ctx) };
}

export interface CallToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

const maskers = new WeakMap<ToolCallContext, Promise<OutputMasker>>();

/**
 * The masker for the caller's account (its redaction patterns, DESIGN §7), loaded once per tool call (so a change
 * of the patterns applies from the next call on): every output a tool hands back, its errors and its audit record
 * go through it.
 */
export function outputMaskerFor(ctx: ToolCallContext): Promise<OutputMasker> {
  let masker = maskers.get(ctx);
  if (masker === undefined) {
    masker = ctx.deps.store.getRedactionPatterns(ctx.principal.accountId).then((p) => createOutputMasker(p));
    maskers.set(ctx, masker);
  }
  return masker;
}

export function errorResult(err: LetKiteError): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(err.toPayload()) }] };
}

/** Validates input, runs the handler, validates output and writes the audit record. */
export async function runTool(handler: ToolHandler, args: unknown, ctx: ToolCallContext): Promise<CallToolResult> {
  const { descriptor } = handler;
  const started = performance.now();
  let outcome: ErrorCode | 'ok' = 'ok';
  try {
    const parsed = descriptor.input.safeParse(args ?? {});
    if (!parsed.success) {
      throw new LetKiteError(
        'invalid_params',
        `invalid arguments for ${descriptor.name}: ${z.prettifyError(parsed.error)}`,
        {
          issues: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
        },
      );
    }
    const result = descriptor.output.parse(await handler.run(parsed.data, ctx)) as Record<string, unknown>;
    return { content: [{ type: 'text', text: JSON.stringify(result, null, 2) }], structuredContent: result };
  } catch (err) {
    if (err instanceof PendingApprovalAnswer) {
      // Not a failure: the call waits for a human, and the answer tells the AI what to do.
      outcome = 'approval_pending';
      const answer = PendingApproval.parse(err.answer) as Record<string, unknown>;
      return { content: [{ type: 'text', text: JSON.stringify(answer, null, 2) }], structuredContent: answer };
    }
    const e = toLetKiteError(err);
    // An error can quote what a machine said (a helper's stderr, a path): masked like any other output, and in
    // the gateway's log too (secrets never in logs).
    const masker = await outputMaskerFor(ctx).catch(() => createOutputMasker());
    if (!(err instanceof LetKiteError))
      ctx.deps.log(`tool ${descriptor.name} failed: ${masker.mask(String(err)).text}`);
    outcome = e.code;
    const payload = masker.maskValue(e.toPayload());
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(payload) }] };
  } finally {
    ctx.deps.metrics?.toolCall(descriptor.name, outcome, (performance.now() - started) / 1000);
    // The stored arguments go through the same masker as the output: the audit log never holds a secret.
    const masker = await outputMaskerFor(ctx).catch(() => createOutputMasker());
    await ctx.deps.store.appendAudit({
      accountId: ctx.principal.accountId,
      at: ctx.deps.now().toISOString(),
      actor: ctx.principal.actor,
      action: `tool.${descriptor.name}`,
      target: ctx.audit.target === undefined ? null : masker.mask(ctx.audit.target).text,
      decision: ctx.audit.decision ?? null,
      outcome,
      details: masker.maskValue(ctx.audit.details ?? {}),
    });
  }
}

/** The JSON Schema published in tools/list — generated from the same zod object that validates. */
export function publishedTool(descriptor: ToolDescriptor) {
  const strip = (schema: Record<string, unknown>) => {
    const { $schema: _s, ...rest } = schema;
    return rest;
  };
  return {
    name: descriptor.name,
    title: descriptor.title,
    description: descriptor.description,
    inputSchema: strip(z.toJSONSchema(descriptor.input, { io: 'input' }) as Record<string, unknown>),
    outputSchema: publishedOutput(descriptor, strip),
    annotations: { title: descriptor.title, ...descriptor.annotations },
  };
}

/**
 * A gated tool answers either with its output or with `PendingApproval`; MCP clients validate structuredContent
 * against this schema, so it admits both (MCP wants `type: "object"` at the top, hence not a bare anyOf).
 */
function publishedOutput(descriptor: ToolDescriptor, strip: (s: Record<string, unknown>) => Record<string, unknown>) {
  const output = strip(z.toJSONSchema(descriptor.output, { io: 'output' }) as Record<string, unknown>);
  if (!descriptor.gated) return output;
  const pending = strip(z.toJSONSchema(PendingApproval, { io: 'output' }) as Record<string, unknown>);
  return { type: 'object', anyOf: [output, pending] };
}
