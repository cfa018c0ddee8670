import { parse as parseToml } from 'smol-toml';
import type { ConfinedDir } from '../checkout/confined-fs.js';

/**
 * What a Python repository declares its tests need, read from its files on the host through
 * the confined file module: pyproject.toml (test extras, PEP 735 dependency groups),
 * requirements files, setup.cfg's extras and tox's deps. Only read, never run: the install
 * itself happens in the sandbox's setup phase.
 */
export interface PythonDeclared {
  /** Requirements files to install with `-r`, relative to the checkout. */
  requirementFiles: string[];
  /** The project can be pip-installed from its root (pyproject [project], setup.py or setup.cfg metadata). */
  installable: boolean;
  /** Extras of the project itself to install with it (`.[test,dev]`). */
  extras: string[];
  /** Requirement lines from dependency groups and tox deps: a spec, or `-r file`/`-e path` split in two. */
  requirements: string[][];
}

/** Requirements files looked for at the root. */
export const REQUIREMENTS = [
  'requirements.txt',
  'requirements-dev.txt',
  'requirements-test.txt',
  'requirements-tests.txt',
  'test-requirements.txt',
  'dev-requirements.txt',
  'requirements_dev.txt',
  'requirements_test.txt',
];

/** The extras and groups that hold what tests need. */
const TEST_EXTRAS = ['test', 'tests', 'testing', 'dev'];
const TEST_GROUPS = ['test', 'tests', 'testing', 'dev'];

/** Configuration files are small; a larger one is not read. */
const MAX_READ_BYTES = 1024 * 1024;

/** A name pip accepts for an extra; anything else is not passed on. */
const EXTRA_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export function pythonDeclared(files: ConfinedDir): PythonDeclared {
  const read = (path: string) => files.readText(path, { maxBytes: MAX_READ_BYTES });
  const isFile = (path: string) => files.info(path).kind === 'file';
  const pyproject = tomlOf(read('pyproject.toml'));
  const setupCfg = iniOf(read('setup.cfg') ?? '');
  const project = objectAt(pyproject, 'project');
  const installable =
    project !== undefined || isFile('setup.py') || setupCfg.has('metadata') || setupCfg.has('options');

  const extras = new Set<string>();
  const optional = objectAt(project, 'optional-dependencies') ?? {};
  for (const name of TEST_EXTRAS) if (Array.isArray(optional[name])) extras.add(name);
  for (const name of keysOf(setupCfg.get('options.extras_require'))) if (TEST_EXTRAS.includes(name)) extras.add(name);

  const requirements: string[][] = [];
  const groups = objectAt(pyproject, 'dependency-groups') ?? {};
  for (const name of TEST_GROUPS)
    if (name in groups) for (const spec of groupSpecs(groups, name, 0)) requirements.push([spec]);
  for (const line of toxDeps(read('tox.ini'))) {
    const split = requirementLine(line);
    if (split) requirements.push(split);
  }
  return {
    requirementFiles: REQUIREMENTS.filter(isFile),
    installable,
    extras: [...extras].filter((e) => EXTRA_NAME.test(e)),
    requirements,
  };
}

/** Whether anything at all is declared (else there is nothing to install but pytest, maybe). */
export function declaresAnything(d: PythonDeclared): boolean {
  return d.requirementFiles.length > 0 || d.installable || d.requirements.length > 0;
}

type Table = Record<string, unknown>;

function tomlOf(text: string | undefined): Table | undefined {
  if (text === undefined) return undefined;
  try {
    return parseToml(text) as Table;
  } catch {
    // A pyproject that does not parse declares nothing we can use; pip would fail on it too.
    return undefined;
  }
}

function objectAt(table: Table | undefined, key: string): Table | undefined {
  const value = table?.[key];
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Table) : undefined;
}

/** A PEP 735 group's specs, with `{include-group = "…"}` followed (a few levels: groups may not cycle). */
function groupSpecs(groups: Table, name: string, depth: number): string[] {
  const entries = groups[name];
  if (!Array.isArray(entries) || depth > 5) return [];
  return entries.flatMap((entry) => {
    if (typeof entry === 'string') return [entry];
    const include = objectAt({ entry }, 'entry')?.['include-group'];
    return typeof include === 'string' ? groupSpecs(groups, include, depth + 1) : [];
  });
}

/**
 * A minimal INI reader for setup.cfg and tox.ini: sections, `key = value` with indented
 * continuation lines, `#`/`;` comment lines. Values are kept raw.
 */
export function iniOf(text: string): Map<string, Map<string, string>> {
  const sections = new Map<string, Map<string, string>>();
  let section: Map<string, string> | undefined;
  let key: string | undefined;
  for (const raw of text.split(/\r?\n/)) {
    if (/^\s*[#;]/.test(raw) || raw.trim() === '') continue;
    const header = /^\[([^\]]+)\]\s*$/.exec(raw);
    if (header) {
      section = new Map();
      sections.set(header[1]!.trim(), section);
      key = undefined;
      continue;
    }
    if (/^\s/.test(raw) && key !== undefined && section) {
      section.set(key, `${section.get(key)}\n${raw.trim()}`);
      continue;
    }
    const pair = /^([^=:\s][^=:]*?)\s*[=:]\s*(.*)$/.exec(raw);
    if (pair && section) {
      key = pair[1]!.trim();
      section.set(key, pair[2]!.trim());
    }
  }
  return sections;
}

const keysOf = (section: Map<string, string> | undefined) => [...(section?.keys() ?? [])];

/**
 * A tox dependency line for some environments only (`numpy: numpy`, `!py37,py38-click7: click<8`):
 * the base test environment has no factors, so it is not its dependency, and pip would refuse the
 * whole install for it ("Invalid requirement").
 */
const FACTOR_CONDITIONAL = /^!?[\w.-]+(?:[,-]!?[\w.-]+)*:\s/;

/** tox's `[testenv] deps`, one requirement a line; substitutions (`{…}`) and factor-conditional lines are left out. */
function toxDeps(text: string | undefined): string[] {
  if (text === undefined) return [];
  const deps = iniOf(text).get('testenv')?.get('deps') ?? '';
  return deps
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter((l) => l !== '' && !l.includes('{') && !FACTOR_CONDITIONAL.test(l));
}

/**
 * One requirement line as pip arguments: `-r file`, `-c file` and `-e path` split in two;
 * other options (an index URL, say) are not passed on: where packages come from is the
 * operator's choice, not the repository's.
 */
function requirementLine(line: string): string[] | undefined {
  const option = /^(-r|-c|-e|--requirement|--constraint|--editable)\s*=?\s*(\S+)$/.exec(line);
  if (option) return [option[1]!, option[2]!];
  if (line.startsWith('-')) return undefined;
  return [line];
}
