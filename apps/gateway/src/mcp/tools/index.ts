import type { ToolHandler } from '../tool-handler';
import { approvalWaitHandler } from './approval-wait';
import { execHandler } from './exec';
import {
  deletePathHandler,
  gitDiffHandler,
  gitStatusHandler,
  listDirHandler,
  readFileHandler,
  writeFileHandler,
} from './files';
import { machinesListHandler } from './machines-list';
import { copyBetweenHostsHandler, transferStartHandler, transferStatusHandler } from './transfers';

/** Every MCP tool the gateway serves, in the order tools/list shows them. */
export const toolHandlers: readonly ToolHandler[] = [
  machinesListHandler,
  execHandler,
  readFileHandler,
  listDirHandler,
  writeFileHandler,
  deletePathHandler,
  gitStatusHandler,
  gitDiffHandler,
  copyBetweenHostsHandler,
  transferStartHandler,
  transferStatusHandler,
  approvalWaitHandler,
];
