// The forensic bench's camcorder: a leak filmed off a screen, as ffmpeg filter steps (F9 and its step-by-step table).
/** The camcorder's steps, in order (camcorderFilter joins them): each can also be applied alone (`--only f9s`). */
export function camcorderSteps(w: number, h: number): { id: string; label: string; filter: string }[] {
  const P = (x: number, y: number, i: number) => `x${i}=${(x * w).toFixed(1)}:y${i}=${(y * h).toFixed(1)}`;
  return [
    {
      id: 'perspective',
      label: 'perspective + rotation',
      filter: `perspective=${P(0.035, 0.06, 0)}:${P(0.965, 0.025, 1)}:${P(0.05, 0.97, 2)}:${P(0.985, 0.945, 3)}:sense=source:interpolation=linear`,
    },
    { id: 'lens', label: 'barrel lens', filter: 'lenscorrection=k1=0.06:k2=0.01' },
    { id: 'blur', label: 'blur 1.3', filter: 'gblur=sigma=1.3' },
    { id: 'noise', label: 'noise 8', filter: 'noise=alls=8:allf=t' },
    { id: 'gamma', label: 'gamma 1.2', filter: 'eq=gamma=1.2' },
    { id: 'fps', label: '25 -> 30 fps', filter: 'fps=25,fps=30' },
  ];
}

/** A camcorder pointed at a screen: keystone + slight rotation (sense=source: the four points become the frame's corners), barrel lens, blur, sensor noise, gamma 1.2, 25 -> 30 fps, CRF 32. */
export function camcorderFilter(w: number, h: number): string {
  return camcorderSteps(w, h)
    .map((s) => s.filter)
    .join(',');
}

/** CRF of the camcorder copy's encode. */
export const CAMCORDER_CRF = 32;
