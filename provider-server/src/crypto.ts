// The provider's crypto as the session layer sees it: small, async, bytes in
// and bytes out. The production implementation runs the lattice layer
// (wasm/ts/he*) and the garbler/OT sender (wasm/ts/gc*, ot*) in the worker
// pool (see workers/crypto-worker.ts); tests of the session layer can plug a
// test double in here without touching the protocol code.
import type { PoolHealth, WorkerMemory } from './workers/pool.js';
import type { TopicsSection } from '../../protocol/package.js';
import type { HeParams, UserKeyId } from '../../wasm/ts/he.js';

/** A served model version, as the session layer needs it. */
export interface ServedModel {
  id: string;
  version: number;
  /** Hex SHA-256 of the whole package file (also its ETag). */
  packageSha256: string;
  packageFile: string;
  packageBytes: number;
  /** Lattice and model parameters from the package header (T = comparison width). */
  params: HeParams;
  /** Hex, the provider's half of the joint seed for p1 (public, in the package). */
  providerSeed: string;
  /** The version's secret key file (mode 0600); read only inside crypto workers. */
  keyFile: string;
  /** Topic models only: B' and the public candidate model, served beside the package. */
  topics?: TopicsSection & { candidatesFile: string };
}

export interface ProviderCrypto {
  /** p0 for this client from the joint seed H("pmf-he-pk-v1" ‖ provider_seed ‖ client_nonce) (docs/crypto.md#per-session-public-key). */
  publicKey(model: ServedModel, clientNonce: Uint8Array): Promise<Uint8Array>;
  /**
   * The key-switching key from the model key to the user key of `user`
   * (deterministic: the same bytes every time for the same user and epoch).
   */
  keySwitchKey(model: ServedModel, user: UserKeyId): Promise<Uint8Array>;
  /** Processes one client OT message (base OTs or an extension batch) and returns the reply. */
  ot(sessionId: string, model: ServedModel, payload: Uint8Array): Promise<Uint8Array>;
  /**
   * Decrypts the client's LWE ciphertext (docs/crypto.md#decryption) under the user key of `user`
   * (never under the model key) into y, garbles the spam comparison and
   * answers the client's Beaver choice bits from the session's OT pool: the
   * spam_gc bundle (docs/crypto.md#garbled-circuits).
   */
  spam(
    sessionId: string,
    model: ServedModel,
    user: UserKeyId,
    lwe: Uint8Array,
    choices: Uint8Array,
  ): Promise<Uint8Array>;
  /**
   * Topics (docs/crypto.md#garbled-circuits): decrypts the topic_request's B' values (one packed
   * ciphertext or B' LWE ciphertexts, `topicCiphertexts`) under the user key, garbles
   * the argmax over the client's gc_choice: the topic_gc bundle and its output
   * decoder (zero labels ‖ Δ, a provider secret the session records with it).
   */
  topics(
    sessionId: string,
    model: ServedModel,
    user: UserKeyId,
    bPrime: number,
    ciphertexts: Uint8Array,
    choices: Uint8Array,
  ): Promise<{ gc: Uint8Array; decoder: Uint8Array }>;
  /**
   * Decodes the client's output labels with the recorded decoder: the topic
   * index, or a bad_field error when a label is not one of its wire's two
   * labels.
   */
  topicLabels(sessionId: string, decoder: Uint8Array, labels: Uint8Array): Promise<number>;
  /**
   * The blocklist OPRF (docs/blocklist.md): k·B for each checked blinded
   * element, k read from the list's key file inside the worker.
   */
  blocklist(keyFile: string, blinded: Uint8Array): Promise<Uint8Array>;
  /** Drops and wipes a session's OT state. */
  endSession(sessionId: string): Promise<void>;
  /** Worker restarts (reported by /healthz). */
  health(): PoolHealth;
  /** Resolves once every crypto worker answered (the health check). */
  ping(): Promise<void>;
  /** Each crypto worker's memory (metrics); absent where there are no workers. */
  memory?(): Promise<WorkerMemory[]>;
  close(): Promise<void>;
}
