import { atLeastGui, type GuiLevel } from '@letkite/policy';
import { guiAct, guiObserve, LetKiteError } from '@letkite/protocol';
import { policyToolReason, requireApproval } from '../../approvals/gate';
import { type MachineCall, prepareMachineCall } from '../../machines/prepare-machine-call';
import { reportedCeiling } from '../../policy/resolve-policy';
import { defineHandler, outputMaskerFor, type ToolCallContext, type ToolHandler } from '../tool-handler';

/** A screenshot of a big screen takes a moment to read, encode and carry. */
const OBSERVE_TIMEOUT_MS = 60_000;
/** A long list of actions (typing, waits of up to 5 s each) may run for a while. */
const ACT_TIMEOUT_MS = 5 * 60_000;

/**
 * The gateway's early refusal (the agent checks again against its real ceiling and display): the policy clamped
 * to the machine's reported ceiling must turn the screen on far enough.
 */
function refuseWithoutScreen(m: MachineCall, needed: Exclude<GuiLevel, 'off'>): void {
  if (atLeastGui(m.clamped.gui, needed)) return;
  const ceiling = reportedCeiling(m.machine);
  const byCeiling = ceiling !== null && !atLeastGui(ceiling.gui, needed);
  const byPolicy = !atLeastGui(m.policy.gui, needed);
  const layer = byCeiling || !byPolicy ? 'ceiling' : 'policy';
  throw new LetKiteError(
    layer === 'ceiling' ? 'blocked_by_ceiling' : 'blocked_by_policy',
    layer === 'ceiling'
      ? `machine "${m.machine.name}" does not allow the screen to be ${needed === 'act' ? 'driven' : 'seen'} here (gui, gui_apps)`
      : `the policy "${m.policy.name}" does not allow the screen to be ${needed === 'act' ? 'driven' : 'seen'} (gui = "${m.policy.gui}")`,
    { layer, key: byCeiling || byPolicy ? 'gui' : 'gui_apps' },
  );
}

async function screenCall(ctx: ToolCallContext, ref: string, needed: Exclude<GuiLevel, 'off'>): Promise<MachineCall> {
  const m = await prepareMachineCall(ctx, ref);
  refuseWithoutScreen(m, needed);
  return m;
}

/**
 * `gui_observe`: the PNG arrives from the agent (already blacked out there) as chunks, and goes to the AI as MCP
 * image content, not inside structuredContent. Window titles and app names are masked like any output.
 */
const observeHandler = defineHandler(guiObserve, async (input, ctx) => {
  const m = await screenCall(ctx, input.machine, 'observe');
  ctx.audit.decision = 'allow';
  const { machine: _machine, ...params } = input;
  const png: string[] = [];
  const result = await m.call('gui_observe', params, {
    timeoutMs: OBSERVE_TIMEOUT_MS,
    onChunk: (stream, data) => {
      if (stream === 'png') png.push(data);
    },
  });
  const masker = await outputMaskerFor(ctx);
  let maskedCount = 0;
  const windows = result.windows.map((w) => {
    const title = masker.mask(w.title);
    const app = masker.mask(w.app);
    const appClass = masker.mask(w.app_class);
    maskedCount += title.masked_count + app.masked_count + appClass.masked_count;
    return { ...w, title: title.text, app: app.text, app_class: appClass.text };
  });
  ctx.audit.details = { image: result.image, windows: windows.length, hidden_windows: result.hidden_windows };
  return { ...result, windows, masked_count: maskedCount, [SCREENSHOT]: png.join('') };
});

/** Where the service leaves the PNG (base64) for `present`; not part of the published output. */
const SCREENSHOT = '__screenshot_png';

export const guiObserveHandler: ToolHandler = {
  ...observeHandler,
  present: (output) => {
    const { [SCREENSHOT]: png, ...rest } = output as Record<string, unknown>;
    return {
      result: rest,
      content: typeof png === 'string' && png.length > 0 ? [{ type: 'image', data: png, mimeType: 'image/png' }] : [],
    };
  },
};

/**
 * `gui_act`: no command rules can judge clicks and keystrokes, so only the policy's `approval.tools` makes it
 * wait for a human. The actions are the audit row's arguments, masked by the runner (typed text can be a secret).
 */
export const guiActHandler = defineHandler(guiAct, async (input, ctx) => {
  const m = await screenCall(ctx, input.machine, 'act');
  const { machine: _machine, ...params } = input;
  ctx.audit.details = { actions: input.actions.length };
  const needsHuman = policyToolReason(m.policy, 'gui_act');
  ctx.audit.decision = needsHuman ? 'approve' : 'allow';
  const approved = needsHuman
    ? (
        await requireApproval(ctx, {
          tool: 'gui_act',
          machine: m.machine,
          policy: m.policy,
          args: input,
          reason: needsHuman,
          agent: { op: 'gui_act', params, machines: [m.machine] },
        })
      ).approved
    : false;
  return m.call('gui_act', params, { approved, timeoutMs: ACT_TIMEOUT_MS });
});
