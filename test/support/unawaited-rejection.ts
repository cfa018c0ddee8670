// A process that guards itself with surviveLostDatabase, then leaves a rejected promise unhandled,
// as pg-boss does with a job's completion: `lost` rejects with node-postgres's message for a cut
// connection, anything else with a plain error. Prints "alive" if it is still running 300 ms later.
import { surviveLostDatabase } from '../../src/db/survive-lost-database.js';
import { createLogger } from '../../src/logger.js';

surviveLostDatabase(createLogger('warn'));
const kind = process.argv[2];
void Promise.reject(new Error(kind === 'lost' ? 'Connection terminated unexpectedly' : 'a bug in the code'));
setTimeout(() => {
  process.stdout.write('alive\n');
}, 300);
