/**
 * The LetKite MCP resources (issue #15): each one is a read-only view of what an existing tool returns, read
 * through that tool (its scopes, machines, policy, masking and caps), so a resource never shows more than the
 * equivalent call would.
 */

/** A resource URI, parsed: which view, and the id in it when the view has one. */
export type ResourceRef =
  | { kind: 'machines' }
  | { kind: 'machine'; id: string }
  | { kind: 'terminal_screen'; id: string }
  | { kind: 'terminal_scrollback'; id: string }
  | { kind: 'job_output'; id: string }
  | { kind: 'shell_sessions' };

export const MACHINES_URI = 'letkite://machines';
export const SHELL_SESSIONS_URI = 'letkite://shell-sessions';

/** The tool each view is read through (its grant checks are the resource's). */
export const toolOfResource: Record<ResourceRef['kind'], string> = {
  machines: 'machines_list',
  machine: 'machines_list',
  terminal_screen: 'terminal_read',
  terminal_scrollback: 'terminal_read',
  job_output: 'job_output',
  shell_sessions: 'shell_run',
};

/** The fixed resources resources/list shows (besides one `letkite://machines/<id>` per reachable machine). */
export const staticResources = [
  {
    uri: MACHINES_URI,
    name: 'machines',
    title: 'Machines',
    description: 'The machines this connection reaches, online or not (what machines_list returns).',
    mimeType: 'application/json',
  },
  {
    uri: SHELL_SESSIONS_URI,
    name: 'shell-sessions',
    title: 'Shell sessions',
    description:
      'The shell_run sessions this connection started (id, machine, last use); an idle session ends after 15 minutes.',
    mimeType: 'application/json',
  },
] as const;

/** The templates resources/templates/list publishes; `{id}` completes through completion/complete. */
export const resourceTemplates = [
  {
    uriTemplate: 'letkite://machines/{id}',
    name: 'machine',
    title: 'Machine',
    description: 'One machine (by id or name): its state, labels and ceiling.',
    mimeType: 'application/json',
  },
  {
    uriTemplate: 'letkite://terminals/{id}/screen',
    name: 'terminal-screen',
    title: 'Terminal screen',
    description: 'The visible screen of a terminal this connection opened, as rendered; secrets masked.',
    mimeType: 'text/plain',
  },
  {
    uriTemplate: 'letkite://terminals/{id}/scrollback',
    name: 'terminal-scrollback',
    title: 'Terminal scrollback',
    description: 'The newest 2,000 lines of a terminal this connection opened (scrollback and screen); masked.',
    mimeType: 'text/plain',
  },
  {
    uriTemplate: 'letkite://jobs/{id}/output',
    name: 'job-output',
    title: 'Job output',
    description: 'The newest page (≤ 60,000 bytes) of a job this connection started; masked.',
    mimeType: 'text/plain',
  },
] as const;

/** The ids in our URIs are machine ids, names (letters, digits, `._-`) or LetKite handle ids. */
const ID = '([A-Za-z0-9._~-]{1,200})';
const patterns: [RegExp, (id: string) => ResourceRef][] = [
  [new RegExp(`^letkite://machines/${ID}$`), (id) => ({ kind: 'machine', id })],
  [new RegExp(`^letkite://terminals/${ID}/screen$`), (id) => ({ kind: 'terminal_screen', id })],
  [new RegExp(`^letkite://terminals/${ID}/scrollback$`), (id) => ({ kind: 'terminal_scrollback', id })],
  [new RegExp(`^letkite://jobs/${ID}/output$`), (id) => ({ kind: 'job_output', id })],
];

/** The view a URI names, or null when it names none of ours. */
export function parseResourceUri(uri: string): ResourceRef | null {
  if (uri === MACHINES_URI) return { kind: 'machines' };
  if (uri === SHELL_SESSIONS_URI) return { kind: 'shell_sessions' };
  for (const [re, make] of patterns) {
    const m = re.exec(uri);
    if (m?.[1]) return make(decodeURIComponent(m[1]));
  }
  return null;
}

/** The template a `ref/resource` completion names, by its uriTemplate. */
export function templateKind(uriTemplate: string): ResourceRef['kind'] | null {
  const i = resourceTemplates.findIndex((t) => t.uriTemplate === uriTemplate);
  return i < 0 ? null : ((['machine', 'terminal_screen', 'terminal_scrollback', 'job_output'] as const)[i] ?? null);
}
