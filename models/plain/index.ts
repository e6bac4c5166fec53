// Public entry points for plaintext models (browser- and Node-safe).
export {
  loadPlainModel,
  plainScores,
  plainVerdict,
  checkFeatures,
  candidates,
  decomposedTopic,
  argmax,
  isSpam,
  publicMetadata,
  trainedOnPublicCorpora,
  PUBLIC_CORPORA,
  type PlainModel,
  type PlainModelHeader,
} from './model.js';
export { chooseT, dotBound, modelT, qmax, worstScore } from './bounds.js';
