import { type ComponentType, lazy, type ReactNode, useEffect, useState } from 'react';

/**
 * The web app's routes, in one place. Each page is loaded on demand. Other parts add a line here for their pages
 * (e.g. `/consent` from src/pages/consent/, `/approvals/:id` from src/pages/approvals/).
 * `public` pages render without a session; the others send a signed-out visitor to /sign-in.
 */
export interface RouteDef {
  path: string;
  page: ComponentType<{ params: Record<string, string> }>;
  public?: boolean;
  /** Shown in the navigation when set. */
  nav?: string;
}

export const routes: RouteDef[] = [
  { path: '/setup', page: lazy(() => import('./pages/onboarding-page')), public: true },
  { path: '/invite', page: lazy(() => import('./pages/onboarding-page')), public: true },
  { path: '/sign-in', page: lazy(() => import('./pages/sign-in-page')), public: true },
  { path: '/', page: lazy(() => import('./pages/overview-page')), nav: 'Overview' },
  { path: '/machines', page: lazy(() => import('./pages/machines-page')), nav: 'Machines' },
  { path: '/enroll', page: lazy(() => import('./pages/enroll-page')), nav: 'Enroll' },
  { path: '/members', page: lazy(() => import('./pages/members-page')), nav: 'Members' },
  { path: '/roles', page: lazy(() => import('./pages/roles-groups-page')), nav: 'Roles & groups' },
  { path: '/tokens', page: lazy(() => import('./pages/tokens-page')), nav: 'API tokens' },
  { path: '/security', page: lazy(() => import('./pages/security-page')), nav: 'Security' },
  { path: '/connections', page: lazy(() => import('./pages/connections/connections-page')), nav: 'Connections' },
  { path: '/approvals', page: lazy(() => import('./pages/approvals/approvals-page')), nav: 'Approvals' },
  { path: '/activity', page: lazy(() => import('./pages/activity/activity-page')), nav: 'Activity' },
  { path: '/policies', page: lazy(() => import('./pages/policies/policies-page')), nav: 'Policies' },
  { path: '/account-settings', page: lazy(() => import('./pages/account-settings-page')), nav: 'Account settings' },
  { path: '/approvals/:id', page: lazy(() => import('./pages/approvals/approval-page')) },
];

/** Matches `/approvals/:id`-style patterns. */
export function matchRoute(pathname: string): { route: RouteDef; params: Record<string, string> } | null {
  for (const route of routes) {
    const want = route.path.split('/');
    const got = pathname.replace(/\/+$/, '').split('/');
    if (route.path === '/') {
      if (pathname === '/') return { route, params: {} };
      continue;
    }
    if (want.length !== got.length) continue;
    const params: Record<string, string> = {};
    const matches = want.every((w, i) => {
      if (!w.startsWith(':')) return w === got[i];
      params[w.slice(1)] = decodeURIComponent(got[i] ?? '');
      return true;
    });
    if (matches) return { route, params };
  }
  return null;
}

export function navigate(to: string): void {
  window.history.pushState(null, '', to);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

export function usePathname(): string {
  const [path, setPath] = useState(window.location.pathname);
  useEffect(() => {
    const update = () => setPath(window.location.pathname);
    window.addEventListener('popstate', update);
    return () => window.removeEventListener('popstate', update);
  }, []);
  return path;
}

export function Link(props: { to: string; children: ReactNode; className?: string; testId?: string }) {
  return (
    <a
      href={props.to}
      className={props.className}
      data-testid={props.testId}
      onClick={(e) => {
        if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        navigate(props.to);
      }}
    >
      {props.children}
    </a>
  );
}
