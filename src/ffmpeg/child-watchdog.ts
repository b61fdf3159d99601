// Ends this process's ffmpeg children when it dies, however it dies (`kill -9` included), since an orphaned ffmpeg
// would run on to its end.
// One small shell per process reads "+PID" / "-PID" lines on a pipe from us; when the pipe closes, which the kernel
// does the moment we exit (SIGKILL included), it SIGKILLs every child still listed. Their outputs are `.part` files or
// scratch folders, so nothing half-written is ever published, and the jobs resume on the next start.
import { type ChildProcess, spawn } from 'node:child_process';

const SCRIPT = [
  'pids=" "',
  'while read -r op pid; do',
  '  case "$op" in',
  '    +) pids="$pids$pid " ;;',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: sh parameter expansion, run by the shell
  '    -) case "$pids" in *" $pid "*) pids="${pids%% $pid *} ${pids#* $pid }" ;; esac ;;',
  '  esac',
  'done',
  'for p in $pids; do kill -KILL "$p" 2>/dev/null; done',
].join('\n');

let watchdog: ChildProcess | undefined;
let broken = false;

function start(): ChildProcess | undefined {
  if (broken || process.platform === 'win32') return undefined;
  if (watchdog) return watchdog;
  try {
    // Its own process group: a Ctrl-C to ours must not end it before it has done its work.
    const child = spawn('/bin/sh', ['-c', SCRIPT], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
    child.on('error', () => {
      broken = true;
      watchdog = undefined;
    });
    child.on('exit', () => {
      if (watchdog === child) watchdog = undefined;
    });
    child.stdin!.on('error', () => {});
    // Neither the shell nor its pipe keeps this process alive.
    child.unref();
    (child.stdin as unknown as { unref?: () => void }).unref?.();
    watchdog = child;
    return child;
  } catch {
    broken = true;
    return undefined;
  }
}

/** Puts `pid` under the watchdog until `release` is called (when the child has ended). */
export function watchChild(pid: number | undefined): () => void {
  const dog = pid === undefined ? undefined : start();
  if (!dog) return () => {};
  dog.stdin!.write(`+ ${pid}\n`);
  return () => {
    if (watchdog === dog && dog.stdin!.writable) dog.stdin!.write(`- ${pid}\n`);
  };
}
