import { terminalOps } from '@letkite/protocol/ops-terminals';
import { TerminalManager } from '../../terminals/terminal-manager';
import type { Feature } from '../feature';

type TerminalOp = 'terminal_open' | 'terminal_send' | 'terminal_read' | 'terminal_text' | 'terminal_close';

/** Interactive terminals (node-pty and a headless xterm, loaded with the first one); they end with the agent. */
export function terminalsFeature(): Feature<TerminalOp> {
  const terminals = new TerminalManager();
  return {
    schemas: terminalOps,
    handlers: {
      terminal_open: (r) => terminals.open(r.params, r.context, r.ceiling),
      terminal_send: (r) => terminals.send(r.params, r.context, r.ceiling),
      terminal_read: (r) => terminals.read(r.params, r.context, r.ceiling),
      terminal_text: (r) => terminals.text(r.params, r.context, r.ceiling, r.signal),
      terminal_close: (r) => terminals.close(r.params, r.context, r.ceiling),
    },
    close: () => terminals.closeAll(),
  };
}
