// A seeded PRNG shared by the forensic tests and the forensic bench: synthetic data reproducible from a seed.

/** mulberry32: small, fast, seeded; every synthetic test is reproducible from its seed. */
export function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const gauss = () => {
    const u = Math.max(next(), 1e-12);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
  };
  return { next, gauss, int: (n: number) => Math.floor(next() * n) };
}
export type Rng = ReturnType<typeof rng>;
