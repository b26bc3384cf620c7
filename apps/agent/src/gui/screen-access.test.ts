import { DEFAULT_CEILING } from '@letkite/ceiling';
import { isLetKiteError, type RequestContext } from '@letkite/protocol';
import { describe, expect, test } from 'vitest';
import type { CeilingState } from '../ceiling/ceiling-source';
import { requestPolicy } from '../guard/request-policy';
import { appAllowed, outsideApps, screenAccess } from './screen-access';

const state = (ceiling: Record<string, unknown>): CeilingState => ({
  source: 'file',
  path: '/test/ceiling.toml',
  ceiling: { ...DEFAULT_CEILING, ...ceiling },
});

function outcome(
  ceiling: Record<string, unknown>,
  policy: Record<string, unknown>,
  needed: 'observe' | 'act',
  context: Partial<RequestContext> = {},
): string {
  try {
    screenAccess(requestPolicy({ name: 'p', ...policy }, state(ceiling)), needed, { policy: null, ...context });
    return 'ok';
  } catch (err) {
    if (!isLetKiteError(err)) throw err;
    return `${err.code}:${String(err.details?.key)}`;
  }
}

describe('the screen switches on the agent', () => {
  test.each([
    [{ gui: 'off' }, { gui: 'act' }, 'observe', 'blocked_by_ceiling:gui'],
    [{ gui: 'observe' }, { gui: 'act' }, 'act', 'blocked_by_ceiling:gui'],
    [{ gui: 'observe' }, { gui: 'act' }, 'observe', 'ok'],
    [{ gui: 'act' }, { gui: 'off' }, 'observe', 'blocked_by_policy:gui'],
    [{ gui: 'act' }, { gui: 'observe' }, 'act', 'blocked_by_policy:gui'],
    [{ gui: 'act' }, { gui: 'act' }, 'act', 'ok'],
    // Lists that share nothing leave the screen off: the machine's list decides.
    [
      { gui: 'act', gui_apps: ['xterm'] },
      { gui: 'act', gui_apps: ['firefox'] },
      'observe',
      'blocked_by_ceiling:gui_apps',
    ],
  ] as const)('ceiling %o, policy %o, needing %s → %s', (ceiling, policy, needed, expected) => {
    expect(outcome(ceiling, policy, needed)).toBe(expected);
  });

  test('gui_act under approval.tools needs a human approval; the gateway saying so counts only without pinned approvers', () => {
    const policy = { gui: 'act', approval: { tools: ['gui_act'] } };
    expect(outcome({ gui: 'act' }, policy, 'act')).toBe('blocked_by_policy:approval.tools');
    expect(outcome({ gui: 'act' }, policy, 'act', { approved: true })).toBe('ok');
    // Observing is not gated.
    expect(outcome({ gui: 'act' }, policy, 'observe')).toBe('ok');
    const pinned = {
      gui: 'act',
      approvers: [{ name: 'petra', credential_id: 'Y3JlZA', public_key: 'a2V5', rp_id: 'localhost' }],
    };
    expect(outcome(pinned, policy, 'act', { approved: true })).toBe('blocked_by_ceiling:approvers');
  });

  test('an application is allowed by its WM_CLASS instance or class; the refusal names the list that left it out', () => {
    const rp = requestPolicy({ name: 'p', gui: 'act', gui_apps: ['xterm', 'Firefox'] }, state({ gui: 'act' }));
    const access = screenAccess(rp, 'observe', { policy: null });
    expect(appAllowed(access, { app: 'xterm', appClass: 'XTerm' })).toBe(true);
    expect(appAllowed(access, { app: 'Navigator', appClass: 'Firefox' })).toBe(true);
    expect(appAllowed(access, { app: 'xmessage', appClass: 'Xmessage' })).toBe(false);
    expect(outsideApps(access, 'x', { app: 'xmessage', appClass: 'Xmessage' }).code).toBe('blocked_by_policy');
    const byMachine = screenAccess(
      requestPolicy({ name: 'p', gui: 'act' }, state({ gui: 'act', gui_apps: ['xterm'] })),
      'observe',
      { policy: null },
    );
    expect(byMachine.apps).toEqual(['xterm']);
    expect(outsideApps(byMachine, 'x', null).code).toBe('blocked_by_ceiling');
    // The refusal never names the hidden application.
    expect(outsideApps(byMachine, 'the point (1, 1)', { app: 'secret-app', appClass: 'Secret' }).message).not.toMatch(
      /secret/i,
    );
  });
});
