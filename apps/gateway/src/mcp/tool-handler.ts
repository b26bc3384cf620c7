import { type ErrorCode, LetKiteError, PendingApproval, type ToolDescriptor, toLetKiteError } from '@letkite/protocol';
import { z } from 'zod';
import { PendingApprovalAnswer } from '../approvals/pending-answer';
import { auditArguments } from '../audit/audit-arguments';
import { noticeTakeover, takeoverTools } from '../audit/takeover-notice';
import type { Principal } from '../auth/principal';
import type { GatewayDeps } from '../deps';
import { createOutputMasker, type OutputMasker } from '../output';
import { actorLabel, type PrincipalActor, principalActor } from '../services/actor';
import { defineService, parseServiceInput, type Service } from '../services/define-service';
import { newRequestId, type ServiceContext } from '../services/service-context';
import { ToolErrorResult, toolErrorResult } from './error-map';

/** What the MCP endpoint knows of one tool call besides its arguments. */
export interface ToolCallInput {
  deps: GatewayDeps;
  principal: Principal;
  /** Aborted when the client cancels the request or the session closes. */
  signal: AbortSignal;
  /** Sends an MCP progress notification when the client asked for progress; a no-op otherwise. */
  progress: (progress: number, total?: number, message?: string) => Promise<void>;
  /** The MCP client as it named itself in `initialize` (unverified: shown as declared by the client). */
  client?: { name: string; version?: string };
  /** Filled by the handler for the audit record written after the call. */
  audit: {
    target?: string;
    decision?: string;
    details?: Record<string, unknown>;
    /** Machines the call reached (prepareMachineCall adds each): the row's machine and the takeover notice. */
    machineIds?: string[];
    /** The command verdict's reasons (layer, rule, message per command). */
    reasons?: readonly unknown[];
  };
}

/**
 * What one tool call's service gets: the service context (the credential as actor, its account, one clock
 * reading) plus what only MCP has — cancellation, progress, the declared client, the audit notes.
 */
export interface ToolCallContext extends ServiceContext<GatewayDeps, PrincipalActor>, ToolCallInput {
  account: string;
}

/** A content item of a tool result besides the JSON text copy. */
export type ToolContent = { type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string };

/** One MCP tool: its published descriptor and the service that does the work. */
export interface ToolHandler {
  descriptor: ToolDescriptor;
  service: Service<z.ZodType, unknown, ToolCallContext>;
  /**
   * Splits the service's answer into the structured result and extra content items that must not sit in
   * structuredContent or its text copy (gui_observe's screenshot goes out as image content).
   */
  present?: (output: unknown) => { result: unknown; content: ToolContent[] };
}

/**
 * Binds a descriptor to its implementation, as a service named after the tool whose input schema is the
 * descriptor's (so what tools/list publishes is what validates). The MCP adapter (`runTool`) parses, runs,
 * validates the output and audits.
 */
export function defineHandler<I extends z.ZodObject, O extends z.ZodObject>(
  descriptor: ToolDescriptor<I, O>,
  run: (input: z.output<I>, ctx: ToolCallContext) => Promise<z.output<O>>,
): ToolHandler {
  const service = defineService<I, z.output<O>, ToolCallContext>({
    name: descriptor.name,
    input: descriptor.input,
    run: (ctx: ToolCallContext, input: z.output<I>) => run(input, ctx),
  });
  return { descriptor, service: service as unknown as ToolHandler['service'] };
}

/** The full context of one call: the endpoint's input plus the actor, account, clock reading and request id. */
export function toolCallContext(call: ToolCallInput, requestId: string = newRequestId()): ToolCallContext {
  return {
    ...call,
    actor: principalActor(call.principal),
    account: call.principal.accountId,
    now: call.deps.now(),
    requestId,
  };
}

export interface CallToolResult {
  [key: string]: unknown;
  /** The JSON text copy first, then any extra items (`ToolHandler.present`). */
  content: [{ type: 'text'; text: string }, ...ToolContent[]];
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
    masker = ctx.deps.store.getRedactionPatterns(ctx.account).then((p) => createOutputMasker(p));
    maskers.set(ctx, masker);
  }
  return masker;
}

/**
 * A refused call (DESIGN §7): `isError`, with `{ code, message, details }` plus the error table's `retryable` and
 * `hint` as structuredContent and the same JSON as text. `payload` must already be masked.
 */
export function errorResult(err: LetKiteError | ReturnType<LetKiteError['toPayload']>): CallToolResult {
  const structured = toolErrorResult(err instanceof LetKiteError ? err.toPayload() : err);
  return {
    isError: true,
    content: [{ type: 'text', text: JSON.stringify(structured) }],
    structuredContent: structured,
  };
}

/**
 * The MCP adapter of a tool's service: parses the arguments with the tool's schema (`invalid_params` naming every
 * problem, unknown keys included), runs the service, validates its output, maps a refusal through the error table
 * and writes the audit record, whatever the outcome.
 */
export async function runTool(handler: ToolHandler, args: unknown, call: ToolCallInput): Promise<CallToolResult> {
  const { descriptor } = handler;
  const ctx = toolCallContext(call);
  const started = performance.now();
  let outcome: ErrorCode | 'ok' = 'ok';
  try {
    const input = parseServiceInput(descriptor.input, args, descriptor.name);
    const output = await handler.service.run(ctx, input);
    const shown = handler.present ? handler.present(output) : { result: output, content: [] };
    const result = descriptor.output.parse(shown.result) as Record<string, unknown>;
    return {
      content: [{ type: 'text', text: JSON.stringify(result, null, 2) }, ...shown.content],
      structuredContent: result,
    };
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
    return errorResult(masker.maskValue(e.toPayload()));
  } finally {
    ctx.deps.metrics?.toolCall(descriptor.name, outcome, (performance.now() - started) / 1000);
    // The stored arguments go through the same masker as the output: the audit log never holds a secret.
    const masker = await outputMaskerFor(ctx).catch(() => createOutputMasker());
    const machineIds = ctx.audit.machineIds ?? [];
    const clientName = ctx.client?.name.slice(0, 200) ?? null;
    await ctx.deps.store.appendAudit({
      accountId: ctx.account,
      at: ctx.deps.now().toISOString(),
      actor: actorLabel(ctx.actor),
      action: `tool.${descriptor.name}`,
      target: ctx.audit.target === undefined ? null : masker.mask(ctx.audit.target).text,
      decision: ctx.audit.decision ?? null,
      outcome,
      details: masker.maskValue({
        ...ctx.audit.details,
        ...(ctx.audit.reasons ? { reasons: ctx.audit.reasons } : {}),
        ...(machineIds.length > 1 ? { machines: machineIds } : {}),
        arguments: auditArguments(args, masker),
      }),
      tool: descriptor.name,
      machineId: machineIds[0] ?? null,
      credentialId: ctx.principal.credentialId,
      userId: ctx.principal.userId,
      clientName,
      requestId: ctx.requestId,
      durationMs: performance.now() - started,
    });
    if (outcome === 'ok' && takeoverTools.has(descriptor.name)) {
      // Not awaited: the notice (a claim, then mail and push) must not slow the call down; it never throws.
      for (const machineId of machineIds) {
        void noticeTakeover(ctx.deps, {
          accountId: ctx.account,
          credentialId: ctx.principal.credentialId,
          credentialKind: ctx.principal.kind,
          userId: ctx.principal.userId,
          actor: actorLabel(ctx.actor),
          machineId,
          tool: descriptor.name,
          clientName,
          requestId: ctx.requestId,
        });
      }
    }
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
 * What a tool's structuredContent can be: its output, `PendingApproval` for a gated tool, or the refusal
 * (`ToolErrorResult`). Strict MCP clients (the TypeScript SDK among them) validate structuredContent against this
 * schema even on `isError` results, so it admits every shape (MCP wants `type: "object"` at the top, hence not a
 * bare anyOf).
 */
function publishedOutput(descriptor: ToolDescriptor, strip: (s: Record<string, unknown>) => Record<string, unknown>) {
  const output = strip(z.toJSONSchema(descriptor.output, { io: 'output' }) as Record<string, unknown>);
  const refusal = strip(z.toJSONSchema(ToolErrorResult, { io: 'output' }) as Record<string, unknown>);
  if (!descriptor.gated) return { type: 'object', anyOf: [output, refusal] };
  const pending = strip(z.toJSONSchema(PendingApproval, { io: 'output' }) as Record<string, unknown>);
  return { type: 'object', anyOf: [output, pending, refusal] };
}
