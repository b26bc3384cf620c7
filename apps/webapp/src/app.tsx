import { useQueryClient } from '@tanstack/react-query';
import { Suspense, useCallback, useEffect, useState } from 'react';
import { client, loadSession, type SessionInfo } from './api';
import { SESSION_ENDED_EVENT } from './queries';
import { Link, matchRoute, navigate, routes, usePathname } from './router';
import { SessionContext } from './session';
import { useWaitingApprovals } from './waiting-approvals';

export function App() {
  const path = usePathname();
  const queryClient = useQueryClient();
  const [session, setSession] = useState<SessionInfo | null>(null);
  const [menuOpen, setMenuOpen] = useState(false);
  const refresh = useCallback(async () => {
    const next = await loadSession().catch((): SessionInfo => ({ user: null }));
    setSession((before) => {
      // Another person or account sees other data: nothing cached for the previous one may show.
      if (before?.user?.id !== next.user?.id || before?.user?.account_id !== next.user?.account_id) {
        queryClient.removeQueries();
      }
      return next;
    });
  }, [queryClient]);
  useEffect(() => {
    void refresh();
    // A query answered `unauthenticated`: the session was revoked or expired meanwhile.
    const ended = () => void refresh();
    window.addEventListener(SESSION_ENDED_EVENT, ended);
    return () => window.removeEventListener(SESSION_ENDED_EVENT, ended);
  }, [refresh]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: closing the menu is what a route change should do
  useEffect(() => setMenuOpen(false), [path]);

  const match = matchRoute(path);
  const needsSignIn = session !== null && !session.user && match !== null && !match.route.public;
  useEffect(() => {
    if (needsSignIn) navigate(`/sign-in?next=${encodeURIComponent(path)}`);
  }, [needsSignIn, path]);
  if (session === null || needsSignIn) return <div className="loading">Loading…</div>;

  const user = session.user;
  const account = session.accounts?.find((a) => a.id === user?.account_id);
  return (
    <SessionContext.Provider value={{ session, refresh }}>
      <header className="topbar">
        <Link to="/" className="brand">
          LetKite
        </Link>
        {user && (
          <>
            <button
              type="button"
              className="menu-toggle"
              aria-expanded={menuOpen}
              onClick={() => setMenuOpen(!menuOpen)}
            >
              Menu
              <WaitingBadge />
            </button>
            <nav className={menuOpen ? 'nav open' : 'nav'} aria-label="Main">
              {routes
                .filter((r) => r.nav)
                .map((r) => (
                  <Link key={r.path} to={r.path} className={r.path === path ? 'active' : ''}>
                    {r.nav}
                    {r.path === '/approvals' && <WaitingBadge testId="approvals-badge" />}
                  </Link>
                ))}
            </nav>
            <div className="who">
              {(session.accounts?.length ?? 0) > 1 ? (
                <select
                  aria-label="Account"
                  value={user.account_id}
                  onChange={async (e) => {
                    await client.session.switchAccount({ account_id: e.target.value });
                    await refresh();
                  }}
                >
                  {session.accounts?.map((a) => (
                    <option key={a.id} value={a.id}>
                      {a.name}
                    </option>
                  ))}
                </select>
              ) : (
                <span className="account">{account?.name}</span>
              )}
              <span className="user" data-testid="signed-in-as">
                {user.name}
              </span>
              <button
                type="button"
                className="link"
                onClick={async () => {
                  await client.session.signOut();
                  await refresh();
                  navigate('/sign-in');
                }}
              >
                Sign out
              </button>
            </div>
          </>
        )}
      </header>
      <main className="content">
        <Suspense fallback={<div className="loading">Loading…</div>}>
          {match ? <match.route.page params={match.params} /> : <NotFound />}
        </Suspense>
      </main>
    </SessionContext.Provider>
  );
}

/** The count of approvals waiting for me, next to the Approvals link (nothing when none wait). */
function WaitingBadge(props: { testId?: string }) {
  const { waiting } = useWaitingApprovals();
  if (waiting.length === 0) return null;
  return (
    <span className="count-badge" data-testid={props.testId} title={`${waiting.length} waiting for you`}>
      {waiting.length}
      <span className="visually-hidden"> waiting for you</span>
    </span>
  );
}

function NotFound() {
  return (
    <section className="card">
      <h1>Not found</h1>
      <p>
        There is no page here. <Link to="/">Go to the overview</Link>
      </p>
    </section>
  );
}
