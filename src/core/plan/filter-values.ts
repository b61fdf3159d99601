// Numbers written into ffmpeg filter expressions, in the one spelling every filter graph here uses.

/** A number as a filter expression reads it, rounded to six decimals. */
export const num = (n: number): string => {
  // Expressions must never see exponent notation or -0.
  const fixed = Number(n.toFixed(6));
  return Object.is(fixed, -0) ? '0' : fixed.toString();
};
