import type { ToolHandler } from '../tool-handler';
import { approvalWaitHandler } from './approval-wait';
import { execHandler } from './exec';
import { execManyHandler } from './exec-many';
import {
  deletePathHandler,
  gitDiffHandler,
  gitStatusHandler,
  listDirHandler,
  readFileHandler,
  writeFileHandler,
} from './files';
import { guiActHandler, guiObserveHandler } from './gui';
import { jobOutputHandler, jobStartHandler, jobStatusHandler, jobStopHandler } from './jobs';
import { machinesListHandler } from './machines-list';
import { shellRunHandler } from './shell-run';
import {
  terminalCloseHandler,
  terminalOpenHandler,
  terminalReadHandler,
  terminalSendHandler,
  terminalWaitHandler,
} from './terminals';
import { copyBetweenHostsHandler, transferStartHandler, transferStatusHandler } from './transfers';
import { tunnelCloseHandler, tunnelOpenHandler, tunnelsListHandler } from './tunnels';
import { wakeDeviceHandler, wakeNodeHandler } from './wake';

/** Every MCP tool the gateway serves, in the order tools/list shows them. */
export const toolHandlers: readonly ToolHandler[] = [
  machinesListHandler,
  execHandler,
  execManyHandler,
  shellRunHandler,
  jobStartHandler,
  jobStatusHandler,
  jobOutputHandler,
  jobStopHandler,
  readFileHandler,
  listDirHandler,
  writeFileHandler,
  deletePathHandler,
  gitStatusHandler,
  gitDiffHandler,
  copyBetweenHostsHandler,
  transferStartHandler,
  transferStatusHandler,
  terminalOpenHandler,
  terminalSendHandler,
  terminalReadHandler,
  terminalWaitHandler,
  terminalCloseHandler,
  tunnelOpenHandler,
  tunnelCloseHandler,
  tunnelsListHandler,
  guiObserveHandler,
  guiActHandler,
  wakeNodeHandler,
  wakeDeviceHandler,
  approvalWaitHandler,
];
