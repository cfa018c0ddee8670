import { useEffect, useState } from 'preact/hooks';

/** Client-side routes under /app/; the server answers index.html for every one of them. */
export type Route = { page: 'tasks' } | { page: 'new' } | { page: 'task'; id: string } | { page: 'account' };

export function parseRoute(pathname: string): Route {
  const rest = pathname.replace(/^\/app\/?/, '');
  const task = /^tasks\/([0-9a-f-]{36})\/?$/.exec(rest);
  if (task) return { page: 'task', id: task[1]! };
  if (rest.startsWith('new')) return { page: 'new' };
  if (rest.startsWith('account')) return { page: 'account' };
  return { page: 'tasks' };
}

export function navigate(path: string) {
  history.pushState(null, '', path);
  dispatchEvent(new PopStateEvent('popstate'));
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.pathname));
  useEffect(() => {
    const update = () => setRoute(parseRoute(location.pathname));
    addEventListener('popstate', update);
    return () => removeEventListener('popstate', update);
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
