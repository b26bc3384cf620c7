import type { Principal } from '../auth/principal';
import type { SignedInUser } from '../identity/current-user';

/**
 * Who performs an operation, as one closed union (REVIEW §2.3-1): every surface turns its caller into one of
 * these, and the audit log spells it with `actorLabel`. The kinds that carry authority carry it here too (the
 * signed-in person's permissions, an MCP caller's grant), so a service checks what the actor may do without a
 * second lookup.
 */
export type Actor =
  /** An MCP call with an API token (`token:<id>`). */
  | { kind: 'token'; id: string; principal: Principal }
  /** An MCP call with an OAuth connection's access token (`connection:<id>`). */
  | { kind: 'connection'; id: string; principal: Principal }
  /** A person signed in to the web app (`user:<id>`). */
  | { kind: 'user'; id: string; user: SignedInUser }
  /** A person not yet signed in, or a step that names the person it identified (`user:<id>`) without a session. */
  | { kind: 'person'; id: string }
  /** Someone before sign-in (sign-in, first-run setup, accepting an invitation): audits name the person found. */
  | { kind: 'anonymous' }
  /** A machine's agent (`agent:<machine id>`). */
  | { kind: 'agent'; machineId: string }
  /** An agent enrolling with a one-time join token (`join_token:<id>`). */
  | { kind: 'join_token'; id: string }
  /** An OAuth client at the token or revocation endpoint (`client:<client id>`). */
  | { kind: 'client'; id: string }
  /** The gateway itself: a sweep, a lockout (`system`), or a named step such as first start (`system:start`). */
  | { kind: 'system'; task?: string }
  /** An administrator's command on the gateway host (`cli:admin`): whoever can read the data directory. */
  | { kind: 'cli'; command: string };

/** The actor kinds, for exhaustive tables. */
export type ActorKind = Actor['kind'];

/** A caller with an MCP credential. */
export type PrincipalActor = Extract<Actor, { kind: 'token' | 'connection' }>;
/** Someone before sign-in. */
export type AnonymousActor = Extract<Actor, { kind: 'anonymous' }>;
/** A person signed in to the web app. */
export type UserActor = Extract<Actor, { kind: 'user' }>;

/**
 * The audit log's spelling of an actor. The strings are stored and exported (the activity log, `audit export`),
 * so this keeps exactly the format the free strings had: `token:…`, `connection:…`, `user:…`, `agent:…`,
 * `join_token:…`, `client:…`, `system`, `system:start`, `cli:admin`.
 */
export function actorLabel(actor: Actor): string {
  switch (actor.kind) {
    case 'token':
    case 'connection':
    case 'user':
    case 'person':
    case 'join_token':
    case 'client':
      return `${actor.kind === 'person' ? 'user' : actor.kind}:${actor.id}`;
    case 'agent':
      return `agent:${actor.machineId}`;
    case 'system':
      return actor.task === undefined ? 'system' : `system:${actor.task}`;
    case 'cli':
      return `cli:${actor.command}`;
    case 'anonymous':
      return 'anonymous';
  }
}

/** The actor of an MCP caller (the principal keeps its audit string for the agent wire, which is the same label). */
export function principalActor(principal: Principal): PrincipalActor {
  return principal.kind === 'api_token'
    ? { kind: 'token', id: principal.credentialId, principal }
    : { kind: 'connection', id: principal.credentialId, principal };
}

/** The actor of a person signed in to the web app. */
export function userActor(user: SignedInUser): UserActor {
  return { kind: 'user', id: user.userId, user };
}
