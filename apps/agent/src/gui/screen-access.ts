import { atLeastGui, type GuiLevel } from '@letkite/policy';
import { LetKiteError, type RequestContext } from '@letkite/protocol';
import { authorizeGatedTool } from '../guard/authorize-command';
import type { RequestPolicy } from '../guard/request-policy';

/** Which applications a request may see and drive: `any` (gui_apps empty on both sides) or the clamped list. */
export interface ScreenAccess {
  any: boolean;
  apps: readonly string[];
  /** The ceiling's own list (for naming the layer that hides a window). */
  ceilingApps: readonly string[];
}

/**
 * The agent's own check of the screen switches (DESIGN §4, §5): the ceiling's `gui` first (its word is final),
 * then the request's policy clamped to it; `gui_act` also needs `act` and, when the policy lists it under
 * `approval.tools`, a human approval that counts here. A policy whose `gui_apps` share nothing with the
 * ceiling's leaves the screen off (clampToCeiling), which is the ceiling's doing.
 */
export function screenAccess(
  rp: RequestPolicy,
  needed: Exclude<GuiLevel, 'off'>,
  context: RequestContext,
): ScreenAccess {
  if (!atLeastGui(rp.ceiling.gui, needed)) {
    throw new LetKiteError(
      'blocked_by_ceiling',
      `this machine's ceiling allows the screen only up to "${rp.ceiling.gui}" (gui = "${rp.ceiling.gui}"), and this needs "${needed}"`,
      { layer: 'ceiling', key: 'gui' },
    );
  }
  if (!atLeastGui(rp.policy.gui, needed)) {
    throw new LetKiteError(
      'blocked_by_policy',
      `the policy "${rp.policy.name}" allows the screen only up to "${rp.policy.gui}", and this needs "${needed}"`,
      { layer: 'policy', key: 'gui' },
    );
  }
  if (!atLeastGui(rp.clamped.gui, needed)) {
    throw new LetKiteError(
      'blocked_by_ceiling',
      "none of the policy's gui_apps is among the applications this machine's ceiling allows",
      { layer: 'ceiling', key: 'gui_apps' },
    );
  }
  if (needed === 'act') authorizeGatedTool(rp, 'gui_act', context);
  return { any: rp.clamped.gui_apps.length === 0, apps: rp.clamped.gui_apps, ceilingApps: rp.ceiling.gui_apps };
}

/** Whether a window's application may be seen and driven: its WM_CLASS instance or class is listed. */
export function appAllowed(access: ScreenAccess, app: { app: string; appClass: string }): boolean {
  return access.any || access.apps.includes(app.app) || access.apps.includes(app.appClass);
}

/** The refusal for a window (or spot) of an application outside gui_apps, naming the layer whose list left it out. */
export function outsideApps(
  access: ScreenAccess,
  what: string,
  app: { app: string; appClass: string } | null,
): LetKiteError {
  const byCeiling =
    access.ceilingApps.length > 0 &&
    (app === null || (!access.ceilingApps.includes(app.app) && !access.ceilingApps.includes(app.appClass)));
  return new LetKiteError(
    byCeiling ? 'blocked_by_ceiling' : 'blocked_by_policy',
    `${what} is not a window of an application the screen tools may use here (gui_apps)`,
    { layer: byCeiling ? 'ceiling' : 'policy', key: 'gui_apps' },
  );
}
