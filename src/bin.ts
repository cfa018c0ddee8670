import { main } from './cli.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(`emend: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
