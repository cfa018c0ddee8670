import type { Logger } from 'pino';
import type { SandboxReport } from './types.js';

/** The sandbox as start-up states it: info when isolated, loudly at warn when not. */
export function logSandboxReport(log: Logger, report: SandboxReport): void {
  const { kind, version, cgroups, memoryLimit, processLimit, limits, setupNetwork, toolRoots, notes, problem, denied } =
    report;
  const fields = {
    sandbox: {
      kind,
      version,
      cgroups,
      memoryLimit,
      processLimit,
      limits,
      setupNetwork,
      toolRoots,
      notes,
      problem,
      denied,
    },
  };
  if (setupNetwork === 'host' && kind === 'bubblewrap') {
    log.warn(
      fields,
      "EMEND_SANDBOX_SETUP_NETWORK=host: dependency installs share this host's network (its loopback, private " +
        'addresses and the cloud metadata address); proxy, the default, reaches the package registries only',
    );
  }
  if (kind === 'unsafe-host') {
    log.warn(
      fields,
      "EMEND_SANDBOX=unsafe-host: repository commands run ON THIS HOST, unisolated, with the service's own " +
        'file access. Development only: never point this at code you do not trust',
    );
  } else if (kind === 'unavailable') {
    log.warn(
      fields,
      `no sandbox: repository commands will be refused (validation fails) until this is fixed: ${problem}`,
    );
  } else if (!memoryLimit || !processLimit) {
    log.warn(
      fields,
      `sandbox: bubblewrap ${version ?? ''}; ` +
        `cgroups ${cgroups}: ${[!memoryLimit && 'memory', !processLimit && 'process count'].filter(Boolean).join(' and ')} ` +
        `not limited on this host`,
    );
  } else {
    log.info(fields, `sandbox: bubblewrap ${version ?? ''}, cgroups ${cgroups} (memory and process limits in force)`);
  }
}
