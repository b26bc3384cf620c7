import type { ToolHandler } from '../tool-handler';
import { execHandler } from './exec';
import { machinesListHandler } from './machines-list';

/** Every MCP tool the gateway serves, in the order tools/list shows them. */
export const toolHandlers: readonly ToolHandler[] = [machinesListHandler, execHandler];
