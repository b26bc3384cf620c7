import { LetKiteError } from '@letkite/protocol';
import type { z } from 'zod';
import { hasPermission, type Permission } from '../identity/permissions';
import type { Actor } from './actor';
import type { ServiceContext } from './service-context';

/**
 * One operation (REVIEW §2.3-1): its name, the zod schema of its input (the only validation there is: every
 * adapter parses with it), the permission a person needs, and the work. Every surface — MCP tools, REST routes,
 * the admin CLI — calls it through `call`, so parsing, the permission check and the error codes are the same
 * wherever the operation is reached from.
 */
export interface Service<I extends z.ZodType, O, C extends ServiceContext<unknown> = ServiceContext> {
  readonly name: string;
  readonly input: I;
  readonly permission: Permission | undefined;
  /** Parses `raw` (`invalid_params` naming every problem), checks the permission, then runs. */
  call(ctx: C, raw: unknown): Promise<O>;
  /** Runs with input that is already typed (still checks the permission): for one operation calling another. */
  run(ctx: C, input: z.output<I>): Promise<O>;
}

/** The definition `defineService` takes. */
export interface ServiceDefinition<I extends z.ZodType, O, C extends ServiceContext<unknown>> {
  name: string;
  input: I;
  /** Checked before `run`: a person needs it; the admin CLI and the gateway itself hold every permission. */
  permission?: Permission;
  run(ctx: C, input: z.output<I>): Promise<O>;
}

/** Defines an operation; see `Service`. */
export function defineService<I extends z.ZodType, O, C extends ServiceContext<unknown> = ServiceContext>(
  def: ServiceDefinition<I, O, C>,
): Service<I, O, C> {
  const run = async (ctx: C, input: z.output<I>): Promise<O> => {
    if (def.permission) requirePermissionOf(ctx.actor, def.permission);
    return def.run(ctx, input);
  };
  return {
    name: def.name,
    input: def.input,
    permission: def.permission,
    run,
    call: async (ctx, raw) => run(ctx, parseServiceInput(def.input, raw)),
  };
}

/**
 * Whether an actor holds a permission. People hold their role's; the admin CLI (whoever can read the gateway's
 * data directory) and the gateway's own tasks hold all. Anyone else — an MCP credential, an agent, someone not
 * signed in — holds none: their authority is a grant or a proof, checked by the operation itself (fail closed).
 */
export function actorHasPermission(actor: Actor, permission: Permission): boolean {
  switch (actor.kind) {
    case 'user':
      return hasPermission(actor.user, permission);
    case 'cli':
    case 'system':
      return true;
    default:
      return false;
  }
}

/** Refuses with `forbidden` unless the actor holds the permission. */
export function requirePermissionOf(actor: Actor, permission: Permission): void {
  if (!actorHasPermission(actor, permission)) {
    throw new LetKiteError('forbidden', `this needs the "${permission}" permission`, { permission });
  }
}

/**
 * Parses an operation's input with its schema, or throws `invalid_params` whose message names every problem
 * (`path: message`; an unknown key of a strict schema is named too) and whose details list them. `name` (the MCP
 * adapter passes the tool's) prefixes the message, so an AI sees which call it got wrong.
 */
export function parseServiceInput<I extends z.ZodType>(schema: I, raw: unknown, name?: string): z.output<I> {
  const parsed = schema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: issueMessage(i) }));
  const text = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ');
  throw new LetKiteError('invalid_params', name ? `invalid arguments for ${name}: ${text}` : text, { issues });
}

/** zod names unknown keys in `keys`; its default message says only "Unrecognized key" for some versions. */
function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') {
    return `unknown ${issue.keys.length === 1 ? 'key' : 'keys'} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
  }
  return issue.message;
}
