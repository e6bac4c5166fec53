// The plaintext modulus choice (mirrors models/pmf_models/quantize.py). The
// private protocol computes d = bias + Σ x_f·w_f modulo 2^T; an email has at
// most L_max rows and every x_f ≤ cap, so the two's-complement result is d
// itself when |d| < 2^(T−1) for every such email.
//
// - dotBound/chooseT: the format's bound, for any weights with |w| ≤ 2^(b_in−1) − 1:
//   |d| ≤ L_max·cap·qmax + qmax.
// - worstScore/modelT: the bound of one model's weights, reached by its extreme
//   admissible emails (the L_max largest positive, or most negative, weights
//   of a column, each at the cap). Usually a few bits below chooseT, and every
//   bit of T costs 256 bytes of each LWE ciphertext (docs/crypto.md#parameters).

export const qmax = (bIn: number): number => 2 ** (bIn - 1) - 1;

export function dotBound(bIn: number, cap: number, lMax: number): number {
  return lMax * cap * qmax(bIn) + qmax(bIn);
}

export function chooseT(bIn: number, cap: number, lMax: number): number {
  return dotBound(bIn, cap, lMax).toString(2).length + 1;
}

/** Largest |d| over every admissible email, for (N+1)×B weights (row 0 the bias). */
export function worstScore(weights: Int32Array, B: number, cap: number, lMax: number): number {
  const rows = weights.length / B - 1;
  let worst = 0;
  for (let j = 0; j < B; j++) {
    const column = new Int32Array(rows);
    for (let r = 0; r < rows; r++) column[r] = weights[(r + 1) * B + j];
    column.sort(); // numeric, ascending
    let neg = 0;
    let pos = 0;
    for (let i = 0; i < Math.min(lMax, rows) && column[i] < 0; i++) neg += column[i];
    for (let i = rows - 1; i >= Math.max(0, rows - lMax) && column[i] > 0; i--) pos += column[i];
    const bias = weights[j];
    worst = Math.max(worst, Math.abs(bias + cap * pos), Math.abs(bias + cap * neg));
  }
  return worst;
}

/** The smallest T (at least b_in, so every weight fits) with 2^(T−1) > worstScore. */
export function modelT(weights: Int32Array, B: number, bIn: number, cap: number, lMax: number): number {
  return Math.max(bIn, worstScore(weights, B, cap, lMax).toString(2).length + 1);
}
