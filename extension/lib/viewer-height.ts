// The viewer frame's height, as the webmail page may see it. The page can
// size the box the frame sits in and read that box's height, so the height
// must say little about the decrypted text: it is rounded up to a few steps,
// and the frame scrolls inside beyond the last one. The frame is also never
// narrower than MIN_WIDTH, so squeezing it does not make every word a line.

export const VIEWER_HEIGHT_STEP = 200;
export const VIEWER_MAX_HEIGHT = 1000;
export const VIEWER_MIN_WIDTH = 320;

/** The frame height shown for a reported content height (one of the steps). */
export function viewerHeight(reported: unknown): number {
  const h = typeof reported === 'number' && Number.isFinite(reported) && reported > 0 ? reported : 0;
  return Math.min(VIEWER_MAX_HEIGHT, Math.max(1, Math.ceil(h / VIEWER_HEIGHT_STEP)) * VIEWER_HEIGHT_STEP);
}
