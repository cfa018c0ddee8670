/**
 * The environment of a git a test runs as a client of a code host: the user's and the system's
 * config left out (nothing on this machine changes what git does), no prompt for credentials (a
 * refusal ends the command instead of hanging the test), C messages (tests match git's words),
 * and HOME a directory of the test's own. Add an identity where the test commits.
 */
export function isolatedGitEnv(home: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    LANG: 'C',
  };
}
