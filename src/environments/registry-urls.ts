/**
 * yarn 1 fetches each package from the URL its lockfile resolved, whatever registry is
 * configured: it rewrites registry.npmjs.org URLs to its own registry.yarnpkg.com when that is
 * the registry, and nothing else (yarn 1.22's NpmResolver.cleanRegistry). So a yarn 1 lockfile
 * fails wherever registry.yarnpkg.com is not reachable, and an operator's mirror never sees it.
 * npm needs none of this: it replaces registry.npmjs.org in its lockfile with the configured
 * registry itself (`replace-registry-host`, default `npmjs`).
 *
 * For the install only, the lockfile's URLs on either public host are pointed at the registry
 * setup uses, `npm_config_registry` (an operator's mirror, EMEND_NPM_REGISTRY, or a repository's
 * setting), else the npm registry, which serves the same packages as yarn's; the lockfile is put
 * back after the install, whatever its result, so nothing of the rewrite is left in the tree.
 * It runs inside the sandbox, in the setup command: the host never writes into a checkout.
 */
const REWRITE = [
  'const fs=require("fs");',
  'const to=(process.env.npm_config_registry||"https://registry.npmjs.org/").replace(/\\/*$/,"/");',
  'const text=fs.readFileSync("yarn.lock","utf8");',
  'fs.writeFileSync("yarn.lock",text.replace(/https?:\\/\\/registry\\.(yarnpkg\\.com|npmjs\\.org)\\//g,to));',
].join('');

/** Whether the install is yarn 1's (yarn 2+ keeps no URLs in its lockfile and uses its configured registry). */
export const isYarnClassic = (install: string) => /^yarn install --frozen-lockfile\b/.test(install);

/** yarn 1's install with its lockfile's registry URLs pointed at the setup's registry, for the install only. */
export function throughSetupRegistry(install: string): string {
  return (
    `cp yarn.lock /tmp/emend-yarn.lock && node -e '${REWRITE}' && ${install}; ` +
    'emend_status=$?; cp /tmp/emend-yarn.lock yarn.lock 2>/dev/null; [ $emend_status -eq 0 ]'
  );
}
