/**
 * What counts as tracking on a generated site: loading anything from a known analytics or
 * advertising host, the snippets those services paste into pages, and beacons. Published
 * sites carry none of it; the operator adds analytics themselves if they want any.
 */
import { parsedUrl } from './site-files.js';

/** Hosts (and their subdomains) of analytics, tag-manager, session-recording and ad-pixel services. */
export const TRACKING_HOSTS: readonly string[] = [
  'google-analytics.com',
  'googletagmanager.com',
  'analytics.google.com',
  'googleadservices.com',
  'googlesyndication.com',
  'doubleclick.net',
  'connect.facebook.net',
  'facebook.com/tr',
  'hotjar.com',
  'hotjar.io',
  'segment.com',
  'segment.io',
  'mixpanel.com',
  'mxpnl.com',
  'amplitude.com',
  'heapanalytics.com',
  'heap.io',
  'fullstory.com',
  'mouseflow.com',
  'crazyegg.com',
  'clarity.ms',
  'bat.bing.com',
  'snap.licdn.com',
  'px.ads.linkedin.com',
  'ads-twitter.com',
  'analytics.twitter.com',
  'analytics.tiktok.com',
  'sc-static.net',
  'scorecardresearch.com',
  'quantserve.com',
  'statcounter.com',
  'stats.wp.com',
  'plausible.io',
  'usefathom.com',
  'simpleanalyticscdn.com',
  'cloud.umami.is',
  'matomo.cloud',
  'counter.dev',
  'js-agent.newrelic.com',
  'cdn.mxpnl.com',
  'static.klaviyo.com',
  'js.hs-analytics.net',
  'js.hs-scripts.com',
  'script.crazyegg.com',
  'yandex.ru/metrika',
  'mc.yandex.ru',
];

/** Whether a URL's host (and path, for the few entries with one) is a known tracker. */
export function trackingHostOf(url: string): string | undefined {
  const u = parsedUrl(url);
  if (!u) return undefined;
  const host = u.hostname.toLowerCase();
  return TRACKING_HOSTS.find((t) => {
    const slash = t.indexOf('/');
    const tHost = slash < 0 ? t : t.slice(0, slash);
    const tPath = slash < 0 ? '' : t.slice(slash);
    return (host === tHost || host.endsWith(`.${tHost}`)) && u.pathname.startsWith(tPath);
  });
}

const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

const HOST_PATTERN = new RegExp(`(?:^|[^a-z0-9-])(${TRACKING_HOSTS.map(escaped).join('|')})`, 'gi');

/** Snippet calls and beacons, with the words a message uses for each. */
const SNIPPETS: readonly { pattern: RegExp; what: string }[] = [
  { pattern: /navigator\s*\.\s*sendBeacon\s*\(/g, what: 'navigator.sendBeacon (sends data in the background)' },
  { pattern: /\bgtag\s*\(\s*['"](?:config|js|event)['"]/g, what: 'a Google gtag() snippet' },
  { pattern: /\bdataLayer\s*\.\s*push\s*\(/g, what: 'a Google Tag Manager dataLayer.push' },
  { pattern: /\bga\s*\(\s*['"](?:create|send)['"]/g, what: 'a Google Analytics ga() snippet' },
  { pattern: /\b_gaq\s*\.\s*push\s*\(/g, what: 'a Google Analytics _gaq snippet' },
  { pattern: /\bfbq\s*\(\s*['"](?:init|track)['"]/g, what: 'a Facebook pixel fbq() snippet' },
  { pattern: /\b_paq\s*\.\s*push\s*\(/g, what: 'a Matomo _paq snippet' },
  { pattern: /\b_hsq\s*\.\s*push\s*\(/g, what: 'a HubSpot _hsq snippet' },
  { pattern: /\b(?:piwik|matomo)\.js\b/g, what: 'a Matomo script' },
  {
    pattern: /\bnew\s+Image\s*\([^)]*\)\s*\)?\s*\.\s*src\s*=\s*['"`]\s*(?:https?:)?\/\//g,
    what: 'an image beacon (new Image().src = a remote URL)',
  },
];

export interface TrackingHit {
  /** 0-based offset in the text. */
  offset: number;
  what: string;
  /** The TRACKING_HOSTS entry, for host hits. */
  host?: string;
}

/** Tracking snippets and tracker hosts mentioned anywhere in a text file. */
export function findTracking(text: string): TrackingHit[] {
  const hits: TrackingHit[] = [];
  for (const m of text.matchAll(HOST_PATTERN)) {
    const host = m[1] ?? '';
    hits.push({
      offset: (m.index ?? 0) + m[0].length - host.length,
      what: `the tracker ${host.toLowerCase()}`,
      host: host.toLowerCase(),
    });
  }
  for (const { pattern, what } of SNIPPETS) {
    for (const m of text.matchAll(pattern)) hits.push({ offset: m.index ?? 0, what });
  }
  return hits.sort((a, b) => a.offset - b.offset);
}
