import { main } from './cli/main.js';

// The CLI as a process: bin/emend.js runs the compiled form, tests run this file with tsx.
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    // Everything is closed by now; a handle some library forgot must not keep us alive.
    setTimeout(() => process.exit(code), 5_000).unref();
  },
  (err: unknown) => {
    console.error(`emend: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
