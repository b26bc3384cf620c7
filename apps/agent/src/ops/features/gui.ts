import { guiOps } from '@letkite/protocol/ops-gui';
import { GuiScreen } from '../../gui/gui-screen';
import type { Feature, FeatureDeps } from '../feature';

/** The screen tools, on the display the agent was given (without one they answer `unsupported`). */
export function guiFeature({ screen }: FeatureDeps): Feature<'gui_observe' | 'gui_act'> {
  const gui = new GuiScreen(screen ?? { platform: process.platform, hostname: '' });
  return {
    schemas: guiOps,
    handlers: {
      gui_observe: (r) => gui.observe(r.params, r.context, r.ceiling, r),
      gui_act: (r) => gui.act(r.params, r.context, r.ceiling, r.signal),
    },
  };
}
