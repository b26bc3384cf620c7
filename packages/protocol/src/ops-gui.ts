import { z } from 'zod';
import { agentOp } from './agent-op';

/**
 * The screen operations (issue #15): `gui_observe` captures the agent's configured X11 display and lists its
 * windows, `gui_act` drives it through XTest. The display is the agent's own configuration, never a parameter,
 * so no caller can point the agent at another screen.
 */

/** An X11 window id as gui_observe lists it. */
export const WindowId = z.number().int().min(1).max(0xffff_ffff).describe('A window id from gui_observe.');

/** Screen coordinates: pixels from the top-left corner of the screen, or of `window` when it is given. */
const coord = z.number().int().min(-32768).max(32767);

export const mouseButtons = ['left', 'middle', 'right'] as const;
export const MouseButton = z.enum(mouseButtons);

/** Pointer actions may name a window: their x/y are then relative to its top-left corner. */
const onWindow = WindowId.optional().describe('When given, x and y are relative to this window (gui_observe id).');

export const ClickAction = z
  .strictObject({
    type: z.literal('click'),
    x: coord,
    y: coord,
    button: MouseButton.default('left'),
    double: z.boolean().optional().describe('Two clicks in a row.'),
    window: onWindow,
  })
  .describe('Move the pointer to x, y and click there.');
export const MoveAction = z
  .strictObject({ type: z.literal('move'), x: coord, y: coord, window: onWindow })
  .describe('Move the pointer to x, y.');
export const ScrollAction = z
  .strictObject({
    type: z.literal('scroll'),
    x: coord,
    y: coord,
    /** Wheel steps: positive scrolls down (dy) or right (dx). */
    dy: z.number().int().min(-50).max(50).default(0),
    dx: z.number().int().min(-50).max(50).default(0),
    window: onWindow,
  })
  .describe('Turn the mouse wheel with the pointer at x, y.');
export const DragAction = z
  .strictObject({
    type: z.literal('drag'),
    x: coord,
    y: coord,
    to_x: coord,
    to_y: coord,
    button: MouseButton.default('left'),
    window: onWindow,
  })
  .describe('Press a button at x, y, move to to_x, to_y and release it there (both points are checked).');
export const TypeAction = z
  .strictObject({
    type: z.literal('type'),
    text: z.string().min(1).max(10_000).describe('Typed into the window that has the keyboard focus.'),
  })
  .describe('Type text (newline: Return, tab: Tab).');
export const KeyAction = z
  .strictObject({
    type: z.literal('key'),
    keys: z
      .string()
      .min(1)
      .max(200)
      .describe('Key combinations separated by spaces, e.g. "ctrl+a BackSpace Return" (X keysym names).'),
  })
  .describe('Press keys or key combinations.');
export const WaitAction = z
  .strictObject({
    type: z.literal('wait'),
    ms: z.number().int().min(1).max(5000).describe('Pause before the next action (the application catches up).'),
  })
  .describe('Wait before the next action.');

export const GuiAction = z.discriminatedUnion('type', [
  ClickAction,
  MoveAction,
  ScrollAction,
  DragAction,
  TypeAction,
  KeyAction,
  WaitAction,
]);
export type GuiAction = z.infer<typeof GuiAction>;

export const MAX_GUI_ACTIONS = 100;

export const GuiWindow = z.object({
  id: WindowId,
  title: z.string(),
  /** WM_CLASS instance name (res_name), e.g. "xterm"; `gui_apps` entries match it or `app_class`. */
  app: z.string(),
  /** WM_CLASS class name (res_class), e.g. "XTerm". */
  app_class: z.string(),
  x: z.number().int(),
  y: z.number().int(),
  width: z.number().int(),
  height: z.number().int(),
  focused: z.boolean(),
});
export type GuiWindow = z.infer<typeof GuiWindow>;

export const GuiObserveParams = z.strictObject({
  window: WindowId.optional().describe('Capture only this window (its rectangle, as it shows on the screen).'),
});
export type GuiObserveParams = z.infer<typeof GuiObserveParams>;

/**
 * The agent's answer to `gui_observe`. The PNG itself arrives before it as `chunk` frames on the stream `png`
 * (base64), so no single frame has to hold a large screenshot.
 */
export const GuiObserveResult = z.object({
  /** The screen's size in pixels. */
  screen: z.object({ width: z.number().int(), height: z.number().int() }),
  /** Where the image sits on the screen (the whole screen, or the window asked for). */
  image: z.object({ x: z.number().int(), y: z.number().int(), width: z.number().int(), height: z.number().int() }),
  /** Windows of allowed applications, bottom to top. */
  windows: z.array(GuiWindow),
  /** Visible windows of other applications: blacked out in the image and not listed. */
  hidden_windows: z.number().int(),
});
export type GuiObserveResult = z.infer<typeof GuiObserveResult>;

export const GuiActParams = z.strictObject({
  actions: z.array(GuiAction).min(1).max(MAX_GUI_ACTIONS),
});
export type GuiActParams = z.infer<typeof GuiActParams>;

export const GuiActResult = z.object({
  performed: z.number().int().describe('How many actions were carried out (all of them on success).'),
  pointer: z.object({ x: z.number().int(), y: z.number().int() }),
});
export type GuiActResult = z.infer<typeof GuiActResult>;

/** This module's agent operations (agent-ops.ts joins every module's into `agentOps`). */
export const guiOps = {
  gui_observe: agentOp(GuiObserveParams, GuiObserveResult, 'chunks'),
  gui_act: agentOp(GuiActParams, GuiActResult, 'call'),
} as const;
