/** A dependency's native module that failed to build in setup: its package and the error. */
export interface NativeBuildFailure {
  package: string;
  /** The compiler's or node-gyp's first error line, at most 300 characters. */
  error: string;
}

const PACKAGE = '((?:@[^/\\s@]+/)?[^/\\s@:]+)';
/** Where each package manager names the package whose install script failed, last match wins. */
const NAMED_BY = [
  // npm 7 and later: "npm error path /workspace/repo/node_modules/x" (npm 7 to 9: "npm ERR! path")
  new RegExp(`^npm (?:ERR!|error) path \\S*node_modules/${PACKAGE}\\s*$`),
  // npm 6 and earlier: "npm ERR! Failed at the x@1.0.0 install script."
  new RegExp(`Failed at the ${PACKAGE}@\\S+ \\w+ script`),
  // yarn 1: "error /workspace/repo/node_modules/x: Command failed."
  new RegExp(`^error \\S*node_modules/${PACKAGE}: Command failed`),
  // pnpm: "node_modules/.pnpm/x@1.0.0/node_modules/x: Running install script, failed"
  new RegExp(`node_modules/${PACKAGE}: Running \\w+ script, failed`),
  // node-gyp itself: "gyp ERR! cwd /workspace/repo/node_modules/x"
  new RegExp(`^gyp ERR! cwd \\S*node_modules/${PACKAGE}\\s*$`),
];

/**
 * A failed setup whose output is node-gyp's (a native module built from source: "gyp ERR!",
 * "node-gyp rebuild"): the package, as npm, yarn, pnpm or node-gyp name it, and the first
 * compiler or node-gyp error. Undefined for any other failure.
 */
export function nativeBuildFailure(output: string): NativeBuildFailure | undefined {
  // npm 7 and later print a script's output after their own prefix.
  const lines = output.split('\n').map((l) => l.trimEnd().replace(/^npm (?:ERR!|error) (?=gyp |\S+:\d+:\d+: )/, ''));
  if (!lines.some((l) => l.startsWith('gyp ERR! '))) return undefined;
  let pkg: string | undefined;
  for (const line of lines)
    for (const pattern of NAMED_BY) {
      const m = pattern.exec(line);
      if (m?.[1] && m[1] !== '.pnpm') pkg = m[1];
    }
  const error =
    lines.find((l) => /(^|: )(fatal )?error: /.test(l) && !l.startsWith('npm ')) ??
    lines.find((l) => l.startsWith('gyp ERR! stack Error: ')) ??
    lines.find((l) => l.startsWith('gyp ERR! '));
  return {
    package: pkg ?? 'a dependency',
    error: (error ?? '')
      .replace(/^gyp ERR! (stack )?/, '')
      .trim()
      .slice(0, 300),
  };
}

export function describeNativeBuildFailure(failure: NativeBuildFailure, node: string | undefined): string {
  return `native module ${failure.package} failed to build${node ? ` under node ${node}` : ''}: ${failure.error}`;
}
