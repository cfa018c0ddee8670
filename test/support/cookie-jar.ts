/**
 * One browser's cookies for one site, as a test's stand-in for a browser talking to the service
 * over real HTTP: Set-Cookie stores (Max-Age=0 or a past Expires removes), `header` sends them back.
 * Paths and domains are not told apart: a jar is one browser on one service.
 */
export class CookieJar {
  private readonly cookies = new Map<string, string>();

  /** Takes the Set-Cookie headers of a fetch response. */
  store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';').map((part) => part.trim());
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      const gone = attributes.some((a) => {
        const [key = '', v = ''] = a.split('=');
        if (key.toLowerCase() === 'max-age') return Number(v) <= 0;
        if (key.toLowerCase() === 'expires') return Date.parse(v) <= Date.now();
        return false;
      });
      if (gone || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  get(name: string): string | undefined {
    return this.cookies.get(name);
  }

  /** The Cookie header this browser sends (empty when it holds none). */
  header(): Record<string, string> {
    if (this.cookies.size === 0) return {};
    return { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
  }

  /** fetch as this browser: its cookies go out, the answer's come in; redirects are not followed. */
  async fetch(url: string | URL, init: RequestInit = {}): Promise<Response> {
    const res = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...this.header(), ...(init.headers as Record<string, string> | undefined) },
    });
    this.store(res);
    return res;
  }
}

/** The Cookie header that carries an inject response's cookie `name` back (for app.inject tests). */
export function cookieFrom(res: { cookies: { name: string; value: string }[] }, name: string): Record<string, string> {
  const cookie = res.cookies.find((c) => c.name === name);
  if (!cookie) throw new Error(`the response set no ${name} cookie`);
  return { cookie: `${name}=${cookie.value}` };
}
