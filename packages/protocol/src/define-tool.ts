import type { z } from 'zod';
import type { ErrorCode } from './errors';

/** MCP tool annotations (hints for clients; they must be honest). */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/**
 * A tool's descriptor: the one place its name, schemas and annotations live. The same zod objects validate calls
 * and are what `tools/list` publishes, so listing and calling cannot diverge.
 */
export interface ToolDescriptor<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  /** Error codes the tool can answer with, besides the ones every tool can (invalid_params, internal …). */
  errors: readonly ErrorCode[];
  /**
   * The call can wait for a human (DESIGN §6): besides `output` it may answer with `PendingApproval`, and the
   * published output schema admits both shapes.
   */
  gated?: boolean;
}

export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(
  tool: ToolDescriptor<I, O>,
): ToolDescriptor<I, O> {
  return tool;
}
