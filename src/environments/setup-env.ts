/**
 * What the setup phase's commands are given besides the proxy (docs/environments.md, "What setup
 * can reach"). A repository's own variables (its settings' `env`, an operator's setup variables)
 * come after these and win.
 */

/**
 * The variables packages document for not downloading a binary from outside the package
 * registries in their install script: a browser build from a CDN, a driver from GitHub's
 * releases. The proxy refuses those hosts, and one such refusal used to fail the whole install.
 * Each name is the package's own (its README or install script); a test that needs the browser
 * gets the system's (the test phase points the runner at it).
 */
export const DOWNLOAD_SKIPS: Readonly<Record<string, string>> = {
  // puppeteer 19 and later, and the older name (puppeteer before 19, and forks that kept it)
  PUPPETEER_SKIP_DOWNLOAD: '1',
  PUPPETEER_SKIP_CHROMIUM_DOWNLOAD: '1',
  // playwright and its browser packages
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1',
  // cypress: `0` installs no binary
  CYPRESS_INSTALL_BINARY: '0',
  // electron (and @electron/get)
  ELECTRON_SKIP_BINARY_DOWNLOAD: '1',
  // chromedriver and geckodriver (and @sitespeed.io's)
  CHROMEDRIVER_SKIP_DOWNLOAD: 'true',
  GECKODRIVER_SKIP_DOWNLOAD: 'true',
  // @sentry/cli
  SENTRYCLI_SKIP_DOWNLOAD: '1',
};

/**
 * Git dependencies written for ssh (`git+ssh://git@github.com/…`, `git@github.com:…`) are
 * fetched over HTTPS, as npm does for `github:` shortcuts: the sandbox has no ssh keys and no
 * way out but the proxy, which git reaches through HTTPS_PROXY. Given through git's own
 * GIT_CONFIG_COUNT variables, so no file is written and a repository's settings may replace them.
 */
const GIT_HOSTS = ['github.com', 'gitlab.com', 'bitbucket.org'];

export function gitOverHttpsEnv(): Record<string, string> {
  const pairs: [string, string][] = [];
  for (const host of GIT_HOSTS) {
    pairs.push([`url.https://${host}/.insteadOf`, `ssh://git@${host}/`]);
    pairs.push([`url.https://${host}/.insteadOf`, `git@${host}:`]);
  }
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(pairs.length) };
  pairs.forEach(([key, value], n) => {
    env[`GIT_CONFIG_KEY_${n}`] = key;
    env[`GIT_CONFIG_VALUE_${n}`] = value;
  });
  // No prompt for credentials: a private repository fails at once, with git's words.
  env.GIT_TERMINAL_PROMPT = '0';
  return env;
}

/** The setup phase's own variables, before the repository's. */
export function setupPhaseEnv(): Record<string, string> {
  return { ...DOWNLOAD_SKIPS, ...gitOverHttpsEnv() };
}
