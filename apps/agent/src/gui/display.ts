import { LetKiteError } from '@letkite/protocol';

/**
 * Which screen the agent drives: the X11 display it was started with (`DISPLAY`, and `XAUTHORITY` for the
 * cookie), read once by `letkite agent run`. It is the machine administrator's choice (the agent's unit or the
 * shell that starts it), never a request parameter, so no gateway or AI can point the agent at another display.
 */
export interface ScreenConfig {
  display?: string | undefined;
  xauthority?: string | undefined;
  /** WAYLAND_DISPLAY and XDG_SESSION_TYPE: how a Wayland session is recognised (and refused). */
  waylandDisplay?: string | undefined;
  sessionType?: string | undefined;
  platform: NodeJS.Platform;
  hostname: string;
}

/** The screen configuration from the agent's environment (the composition root passes its env). */
export function screenConfigFromEnv(
  env: Record<string, string | undefined>,
  platform: NodeJS.Platform,
  hostname: string,
): ScreenConfig {
  const home = env.HOME;
  return {
    display: env.DISPLAY || undefined,
    xauthority: env.XAUTHORITY || (home ? `${home}/.Xauthority` : undefined),
    waylandDisplay: env.WAYLAND_DISPLAY || undefined,
    sessionType: env.XDG_SESSION_TYPE || undefined,
    platform,
    hostname,
  };
}

/**
 * The X11 display to use, or `unsupported` naming why: only X11 on Linux is supported so far. Under Wayland an
 * X11 client sees only other X11 clients (XWayland), so neither the screenshot nor the blacking out would cover
 * the real screen: refused even when DISPLAY is set.
 */
export function x11Display(config: ScreenConfig): string {
  if (config.platform === 'darwin' || config.platform === 'win32') {
    const os = config.platform === 'darwin' ? 'macOS' : 'Windows';
    throw new LetKiteError('unsupported', `the screen tools do not support ${os} yet (only X11 on Linux)`, {
      layer: 'agent',
      platform: config.platform,
    });
  }
  if (config.platform !== 'linux') {
    throw new LetKiteError('unsupported', `the screen tools support only X11 on Linux, not ${config.platform}`, {
      layer: 'agent',
      platform: config.platform,
    });
  }
  if (config.sessionType === 'wayland' || (config.waylandDisplay && !config.display)) {
    throw new LetKiteError(
      'unsupported',
      'the screen tools do not support Wayland sessions yet (only X11): the agent runs in a Wayland session',
      { layer: 'agent', session: 'wayland' },
    );
  }
  if (!config.display) {
    throw new LetKiteError(
      'unsupported',
      'this agent has no screen configured: start it with DISPLAY set to the X11 display to use (e.g. DISPLAY=:0)',
      { layer: 'agent', key: 'DISPLAY' },
    );
  }
  return config.display;
}
