// A PostgreSQL killed under load (SIGKILL to every server process: connections cut, transactions in flight lost),
// then started again (crash recovery), under a real `wmark serve`: every request answered within the bound, the
// refused ones done exactly once after (test/helpers/postgres-fault.ts).
import { describePostgresFault } from '../helpers/postgres-fault.js';

describePostgresFault({ name: 'killed under load, then restarted', away: 'killed', kills: true, begin: (pg) => pg.kill(), end: (pg) => pg.restart() });
