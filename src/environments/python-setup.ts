import { type PythonDeclared, declaresAnything } from './python-deps.js';

/**
 * The environment's virtualenv, under HOME (which lasts from setup to tests, see RunTree).
 * `--system-site-packages`: what the distribution installed (python3-pytest and friends)
 * still serves, so an air-gapped server without an index keeps working.
 */
export const VENV = '$HOME/.venv';
const PY = `"${VENV}/bin/python"`;

/** One word for sh, whatever it holds: repository content never becomes shell syntax. */
export const shellQuote = (word: string): string => `'${word.replaceAll("'", `'\\''`)}'`;

/**
 * The setup of a Python repository: a virtualenv holding what it declares, and pytest when
 * its tests use pytest and nothing provides it. With nothing declared the setup only
 * provides pytest (`onlyFor: 'pytest'`): it is dropped where the sandbox's python already
 * imports pytest, so the common case costs no install.
 */
export function pythonSetup(
  declared: PythonDeclared,
  usesPytest: boolean,
): { command: string; onlyFor?: 'pytest' } | null {
  const args: string[] = [];
  for (const file of declared.requirementFiles) args.push('-r', shellQuote(file));
  if (declared.installable)
    args.push('-e', shellQuote(declared.extras.length > 0 ? `.[${declared.extras.join(',')}]` : '.'));
  for (const line of declared.requirements) args.push(...line.map(shellQuote));
  const steps = [`python3 -m venv --system-site-packages "${VENV}"`];
  if (args.length > 0) steps.push(`${PY} -m pip install --quiet ${args.join(' ')}`);
  // After the declared packages, which may have brought pytest themselves.
  if (usesPytest) steps.push(`{ ${PY} -c 'import pytest' 2>/dev/null || ${PY} -m pip install --quiet pytest; }`);
  if (!declaresAnything(declared) && !usesPytest) return null;
  return { command: steps.join(' && '), ...(declaresAnything(declared) ? {} : { onlyFor: 'pytest' as const }) };
}
