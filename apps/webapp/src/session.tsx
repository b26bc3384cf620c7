import { createContext, useContext } from 'react';
import type { SessionInfo } from './api';

export interface SessionState {
  session: SessionInfo;
  /** Reloads the session (after sign-in, sign-out, switching account). */
  refresh: () => Promise<void>;
}

export const SessionContext = createContext<SessionState>({ session: { user: null }, refresh: async () => {} });

export function useSession(): SessionState {
  return useContext(SessionContext);
}
