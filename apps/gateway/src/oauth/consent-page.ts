import { createHash } from 'node:crypto';
import type { Group } from '../identity/identity-store';
import type { ChoosablePolicy } from '../policies/choosable-policies';
import type { Machine } from '../store/types';
import { type AuthorizationParams, type AuthorizationRequest, authorizationParams } from './authorization-request';
import { redirectTarget } from './redirect-uri';
import { type ToolGroup, toolGroupLabels, toolGroupNames } from './scopes';

/** Where people sign in; the consent page sends them there with `next` and they come back. */
export const SIGN_IN_PATH = '/sign-in';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

const STYLE = `
body{font:16px/1.45 system-ui,sans-serif;margin:0;background:#f5f6f8;color:#1c1f24}
main{max-width:34rem;margin:0 auto;padding:1.25rem}
section{background:#fff;border:1px solid #dde1e6;border-radius:10px;padding:1rem 1.1rem;margin:0 0 1rem}
h1{font-size:1.35rem;margin:.5rem 0 1rem}h2{font-size:1rem;margin:0 0 .6rem}
.declared{font-size:.8rem;color:#6b7280;font-style:italic}.warn{color:#9a3412}
label{display:flex;gap:.5rem;align-items:flex-start;padding:.3rem 0}input[type=checkbox],input[type=radio]{margin-top:.3rem}
select{font:inherit;padding:.3rem;max-width:100%}code{word-break:break-all}
.actions{display:flex;gap:.75rem;flex-wrap:wrap}
button{font:inherit;padding:.65rem 1.2rem;border-radius:8px;border:1px solid #9ca3af;background:#fff;cursor:pointer}
button.allow{background:#1d4ed8;border-color:#1d4ed8;color:#fff}
.machines{margin-left:1.6rem}`;

/** The CSP hash of the page's only style block: no inline script or style runs besides it. */
const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;

/**
 * Security headers of the consent page: no framing (clickjacking), nothing loaded from anywhere, no referrer to
 * other sites, no caching. `form-action` must also name the client's redirect origin: Chromium applies it to the redirect that
 * follows the form post.
 */
export function consentHeaders(redirectUri: string | null): Record<string, string> {
  let target = '';
  if (redirectUri) {
    const url = new URL(redirectUri);
    target = url.protocol === 'http:' || url.protocol === 'https:' ? ` ${url.origin}` : ` ${url.protocol}`;
  }
  return {
    'Content-Security-Policy': `default-src 'none'; style-src ${STYLE_HASH}; form-action 'self'${target}; frame-ancestors 'none'; base-uri 'none'`,
    'X-Frame-Options': 'DENY',
    // `same-origin`, not `no-referrer`: under no-referrer the browser sends `Origin: null` with the form post,
    // which the CSRF check rightly refuses. The client's site still gets no referrer.
    'Referrer-Policy': 'same-origin',
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  };
}

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`;
}

/** A page for a request that cannot be sent back to the client (unknown client or redirect URI). */
export function errorPage(message: string): string {
  return page(
    'Cannot connect',
    `<h1>This connection request cannot be used</h1><section><p>${escapeHtml(message)}</p><p>Go back to the AI client and start connecting again.</p></section>`,
  );
}

export interface ConsentView {
  request: AuthorizationRequest;
  userName: string;
  canConnect: boolean;
  csrfToken: string;
  machines: Machine[];
  groups: Group[];
  policies: ChoosablePolicy[];
}

function hiddenParams(params: AuthorizationParams): string {
  return authorizationParams
    .map((k) => (params[k] === undefined ? '' : `<input type="hidden" name="${k}" value="${escapeHtml(params[k])}">`))
    .join('');
}

/** The consent page: who the client says it is, where it sends the person back, and the person's choices. */
export function consentPage(v: ConsentView): string {
  const { client } = v.request;
  const name = client.metadata.client_name ?? 'An unnamed AI client';
  const preselected: ToolGroup[] = v.request.requestedGroups.length > 0 ? v.request.requestedGroups : toolGroupNames;
  const who = `<section><h1>${escapeHtml(name)} <span class="declared">(as declared by the client)</span> wants to use LetKite as ${escapeHtml(v.userName)}</h1>
<p>It will send you back to <strong>${escapeHtml(redirectTarget(v.request.redirectUri))}</strong>.</p>
${client.metadata.client_uri ? `<p>Web site: <code>${escapeHtml(client.metadata.client_uri)}</code> <span class="declared">(as declared by the client)</span></p>` : ''}
${client.kind === 'document' ? `<p>Its description is published at <code>${escapeHtml(client.clientId)}</code>.</p>` : '<p class="declared">The client registered itself; LetKite cannot confirm who made it.</p>'}
</section>`;
  const hidden = `${hiddenParams(v.request.params)}<input type="hidden" name="csrf_token" value="${escapeHtml(v.csrfToken)}">`;
  if (!v.canConnect) {
    return page(
      'Connect an AI client',
      `${who}<section><p class="warn">Your role does not allow connecting AI clients. Ask an owner or admin.</p></section>
<form method="post" action="/authorize">${hidden}<div class="actions"><button name="decision" value="deny">Back to the client</button></div></form>`,
    );
  }
  // Only groups some offered policy can use (and the account has not switched off); the grant keeps those of the
  // chosen policy (approve-authorization.ts).
  const offered = toolGroupNames.filter((g) => v.policies.some((p) => p.toolGroups.includes(g)));
  const groupBoxes = offered
    .map(
      (g) =>
        `<label><input type="checkbox" name="groups" value="${g}"${preselected.includes(g) ? ' checked' : ''}> ${escapeHtml(toolGroupLabels[g])}</label>`,
    )
    .join('');
  const machineBoxes = v.machines
    .map(
      (m) =>
        `<label><input type="checkbox" name="machine_ids" value="${escapeHtml(m.id)}"> ${escapeHtml(m.name)}${m.hostname ? ` <span class="declared">${escapeHtml(m.hostname)}</span>` : ''}</label>`,
    )
    .join('');
  const groupChoice =
    v.groups.length === 0
      ? ''
      : `<label><input type="radio" name="machines_kind" value="group"> The machines of group
<select name="group_id" aria-label="Group">${v.groups.map((g) => `<option value="${escapeHtml(g.id)}">${escapeHtml(g.name)}</option>`).join('')}</select></label>`;
  const policies = v.policies
    .map(
      (p) =>
        `<label><input type="radio" name="policy" value="${escapeHtml(p.name)}"${p.name === 'read-only' ? ' checked' : ''}> ${escapeHtml(p.name)}${p.builtin ? ' <span class="declared">(built-in)</span>' : ''} <span class="declared">can use: ${p.toolGroups.map((g) => escapeHtml(toolGroupLabels[g])).join(', ') || 'listing machines only'}</span></label>`,
    )
    .join('');
  return page(
    'Connect an AI client',
    `${who}<form method="post" action="/authorize">${hidden}
<section><h2>What it may do</h2>${groupBoxes}<p class="declared">It can always list machines and wait for approvals.</p></section>
<section><h2>Which machines</h2>
<label><input type="radio" name="machines_kind" value="all" checked> Every machine I can reach</label>
<label><input type="radio" name="machines_kind" value="chosen"> Only these:</label><div class="machines">${machineBoxes || '<p class="declared">No machines yet.</p>'}</div>
${groupChoice}</section>
<section><h2>Policy</h2>${policies}</section>
<div class="actions"><button class="allow" name="decision" value="allow">Connect</button><button name="decision" value="deny">Deny</button></div>
</form>`,
  );
}
