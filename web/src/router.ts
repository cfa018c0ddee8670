import { useEffect, useState } from 'preact/hooks';

/** Client-side routes under /app/; the server answers index.html for every one of them. */
export type Route =
  | { page: 'tasks' }
  | { page: 'new' }
  | { page: 'task'; id: string }
  | { page: 'account' }
  | { page: 'workspace' }
  | { page: 'audit' }
  | { page: 'invitation'; secret: string };

/**
 * The route of a location. An invitation's link carries its secret after `#` (/app/#/invitation/<secret>,
 * the API's invitation `url`), so the secret is never sent to the server in a request line or a log.
 */
export function parseRoute(pathname: string, hash = ''): Route {
  const invitation = /^#\/invitation\/([^/?#]+)\/?$/.exec(hash);
  if (invitation) return { page: 'invitation', secret: decodeURIComponent(invitation[1]!) };
  const rest = pathname.replace(/^\/app\/?/, '');
  const task = /^tasks\/([0-9a-f-]{36})\/?$/.exec(rest);
  if (task) return { page: 'task', id: task[1]! };
  if (rest.startsWith('new')) return { page: 'new' };
  if (rest.startsWith('account')) return { page: 'account' };
  if (rest.startsWith('workspace')) return { page: 'workspace' };
  if (rest.startsWith('audit')) return { page: 'audit' };
  return { page: 'tasks' };
}

export function navigate(path: string) {
  history.pushState(null, '', path);
  dispatchEvent(new PopStateEvent('popstate'));
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.pathname, location.hash));
  useEffect(() => {
    const update = () => setRoute(parseRoute(location.pathname, location.hash));
    addEventListener('popstate', update);
    addEventListener('hashchange', update);
    return () => {
      removeEventListener('popstate', update);
      removeEventListener('hashchange', update);
    };
  }, []);
  return route;
}

/** A link that changes the page without reloading it (and still works with a modifier key or middle click). */
export function onLinkClick(e: MouseEvent) {
  const a = e.currentTarget as HTMLAnchorElement;
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  navigate(a.getAttribute('href')!);
}
