// A free TCP port on loopback, with no test-runner imports, so benches can start the same throwaway servers as tests.
import net from 'node:net';

/** A port that was free when asked: a caller that loses it before binding retries with another. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}
