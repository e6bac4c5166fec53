// Public entry points of the feature extractor (browser- and Node-safe).
export { extractFeatures, featuresFromTokens, type Features } from './extract.js';
export { makeSpec, validateSpec, countCap, type FeatureSpec } from './spec.js';
export { tokenRow } from './hash.js';
export { tokenize, tokens, wordsOf, urlHosts, MAX_TOKENS } from './tokenize.js';
