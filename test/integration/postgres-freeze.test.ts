// A PostgreSQL that freezes under load (every server process SIGSTOPped: connections stay open, nothing answers),
// then wakes (SIGCONT), under a real `wmark serve`: every request answered within the bound, the refused ones done
// exactly once after (test/helpers/postgres-fault.ts).
import { describePostgresFault } from '../helpers/postgres-fault.js';

describePostgresFault({ name: 'frozen under load, then thawed', away: 'frozen', begin: (pg) => pg.freeze(), end: (pg) => pg.thaw() });
