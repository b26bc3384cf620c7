import { z } from 'zod';
import { defineTool } from '../define-tool';
import { GuiActParams, GuiActResult, GuiObserveParams, GuiObserveResult } from '../ops-gui';
import { gatedCallErrors, MachineRef, reachingMachineErrors } from './common';

/**
 * The screen tools (DESIGN §7, issue #15). Listed only to a connection whose policy turns the screen on; the
 * machine's ceiling (`gui`, `gui_apps`) bounds them again on the agent. X11 on Linux only for now: Wayland, macOS
 * and Windows answer `unsupported`.
 */

export const guiObserveInput = z.strictObject({ machine: MachineRef, ...GuiObserveParams.shape });
export const guiObserveOutput = GuiObserveResult.extend({
  masked_count: z.number().int().describe('How many secrets in window titles were replaced by ***.'),
});
export const guiObserve = defineTool({
  name: 'gui_observe',
  title: 'Look at the screen',
  description:
    "Takes a screenshot of the machine's screen (PNG image content) and lists its windows (id, title, app, geometry, focus). When the policy or the machine limits the screen to some applications, every other window is blacked out in the image and left out of the list. Pass window to capture one window.",
  input: guiObserveInput,
  output: guiObserveOutput,
  annotations: { readOnlyHint: true, idempotentHint: false, openWorldHint: false },
  // unsupported: no X11 display here (Wayland, macOS, Windows, none configured); not_found: no such window;
  // blocked_by_policy / blocked_by_ceiling also cover a window of an application outside gui_apps.
  errors: [...reachingMachineErrors, 'blocked_by_policy', 'unsupported', 'not_found'],
});

export const guiActInput = z.strictObject({ machine: MachineRef, ...GuiActParams.shape });
export const guiAct = defineTool({
  name: 'gui_act',
  title: 'Drive the screen',
  description:
    "Clicks, drags, moves the pointer, scrolls, types text and presses keys on the machine's screen, in order (x/y in screen pixels as gui_observe shows them, or relative to a window). Keyboard input goes to the window with the focus: click into it first. With gui_apps set, an action outside those applications' windows is refused and nothing after it runs (details.action_index). Call gui_observe afterwards to see the effect.",
  input: guiActInput,
  output: GuiActResult,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  errors: [...reachingMachineErrors, ...gatedCallErrors, 'unsupported', 'not_found'],
  gated: true,
});

/** The screen tools, in the order DESIGN §7 lists them. */
export const guiTools = [guiObserve, guiAct] as const;
