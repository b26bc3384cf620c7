import { Suspense, useCallback, useEffect, useState } from 'react';
import { api, loadSession, type SessionInfo } from './api';
import { Link, matchRoute, navigate, routes, usePathname } from './router';
import { SessionContext } from './session';

export function App() {
  const path = usePathname();
  const [session, setSession] = useState<SessionInfo | null>(null);
  const [menuOpen, setMenuOpen] = useState(false);
  const refresh = useCallback(async () => setSession(await loadSession().catch(() => ({ user: null }))), []);
  useEffect(() => {
    void refresh();
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
            </button>
            <nav className={menuOpen ? 'nav open' : 'nav'} aria-label="Main">
              {routes
                .filter((r) => r.nav)
                .map((r) => (
                  <Link key={r.path} to={r.path} className={r.path === path ? 'active' : ''}>
                    {r.nav}
                  </Link>
                ))}
            </nav>
            <div className="who">
              {(session.accounts?.length ?? 0) > 1 ? (
                <select
                  aria-label="Account"
                  value={user.account_id}
                  onChange={async (e) => {
                    await api('POST', '/api/session/account', { account_id: e.target.value });
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
                  await api('POST', '/api/auth/sign-out');
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

function NotFound() {
  return (
    <section className="card">
      <h1>Not found</h1>
      <p>
        There is no page here. <Link to="/">Go to machines</Link>
      </p>
    </section>
  );
}
