// Message schemas of the session protocol (docs/wire-formats.md#messages) and their body
// codec. A body is the schema's fields in order:
//   u32          big-endian
//   str(max)     u16 byte length + UTF-8 (printable, no control characters)
//   bytes(a..b)  u32 byte length + raw bytes, a ≤ length ≤ b
// Decoding checks each declared length against the schema bound and against
// the bytes remaining before slicing, and rejects trailing bytes, so a peer
// cannot make us allocate more than it actually sent or than the schema allows.
import { ProtocolError } from './errors.js';
import { decodeFrame, FRAME_HEADER_BYTES, newFrame } from './frame.js';
import { LIMITS } from './limits.js';

type FieldSpec =
  | { name: string; kind: 'u32' }
  | { name: string; kind: 'str'; max: number }
  | { name: string; kind: 'bytes'; min: number; max: number };

const u32 = (name: string): FieldSpec => ({ name, kind: 'u32' });
const str = (name: string, max: number): FieldSpec => ({ name, kind: 'str', max });
const bytes = (name: string, min: number, max: number): FieldSpec => ({ name, kind: 'bytes', min, max });

/** Type byte and fields of every message. */
/** topic_request, and topic_resend which repeats one byte for byte. */
const TOPIC_REQUEST = [
  str('messageId', LIMITS.id),
  bytes('lwes', 1, LIMITS.bPrime * LIMITS.lwe),
  bytes('choices', 1, LIMITS.topicChoices),
];

export const SCHEMAS = {
  hello: {
    type: 1,
    fields: [
      str('token', LIMITS.token),
      str('modelId', LIMITS.id),
      u32('modelVersion'),
      bytes('clientNonce', 32, 32),
      u32('keyEpoch'),
    ],
  },
  welcome: {
    type: 2,
    fields: [
      str('sessionId', LIMITS.id),
      u32('modelVersion'),
      bytes('packageSha256', 32, 32),
      bytes('candidatesSha256', 0, 32),
      bytes('p0', 1, LIMITS.p0),
      u32('keyEpoch'),
      bytes('ksk', 0, LIMITS.ksk),
      u32('keyBudget'),
      u32('maxFrameBytes'),
      u32('requestsPerMinute'),
    ],
  },
  ot: { type: 3, fields: [bytes('payload', 1, LIMITS.ot)] },
  ot_reply: { type: 4, fields: [bytes('payload', 0, LIMITS.ot)] },
  spam_request: {
    type: 5,
    fields: [str('messageId', LIMITS.id), bytes('lwe', 1, LIMITS.lwe), bytes('choices', 1, LIMITS.choices)],
  },
  spam_gc: { type: 6, fields: [str('messageId', LIMITS.id), bytes('gc', 1, LIMITS.gc)] },
  spam_done: { type: 7, fields: [str('messageId', LIMITS.id)] },
  error: { type: 8, fields: [str('code', LIMITS.errorCode), str('message', LIMITS.errorText)] },
  ping: { type: 9, fields: [u32('nonce')] },
  pong: { type: 10, fields: [u32('nonce')] },
  bye: { type: 11, fields: [] },
  topic_request: { type: 12, fields: TOPIC_REQUEST },
  topic_gc: { type: 13, fields: [str('messageId', LIMITS.id), bytes('gc', 1, LIMITS.topicGc)] },
  topic_labels: { type: 14, fields: [str('messageId', LIMITS.id), bytes('labels', 1, LIMITS.labels)] },
  topic_ack: { type: 15, fields: [str('messageId', LIMITS.id)] },
  topic_setting: { type: 16, fields: [u32('optOut')] },
  topic_setting_ack: { type: 17, fields: [u32('optOut')] },
  spam_resend: {
    type: 18,
    fields: [str('messageId', LIMITS.id), bytes('lwe', 1, LIMITS.lwe), bytes('choices', 1, LIMITS.choices)],
  },
  blocklist_request: {
    type: 19,
    fields: [
      str('messageId', LIMITS.id),
      str('listId', LIMITS.listId),
      u32('listVersion'),
      bytes('blinded', LIMITS.blocklistItems * 32, LIMITS.blocklistItems * 32),
    ],
  },
  blocklist_reply: {
    type: 20,
    fields: [str('messageId', LIMITS.id), bytes('evaluated', LIMITS.blocklistItems * 32, LIMITS.blocklistItems * 32)],
  },
  topic_resend: { type: 21, fields: TOPIC_REQUEST },
} as const satisfies Record<string, { type: number; fields: readonly FieldSpec[] }>;

export type MessageName = keyof typeof SCHEMAS;

export interface Messages {
  /** keyEpoch: the user-key epoch whose KSK the client holds for this model version (0: none). */
  hello: { token: string; modelId: string; modelVersion: number; clientNonce: Uint8Array; keyEpoch: number };
  /**
   * keyEpoch: the user-key epoch this session decrypts under; ksk: its
   * key-switching key, empty when the client said it holds it; keyBudget:
   * decryptions left under it before the next epoch; candidatesSha256: the
   * topic model's public candidate model (empty for spam).
   */
  welcome: {
    sessionId: string;
    modelVersion: number;
    packageSha256: Uint8Array;
    candidatesSha256: Uint8Array;
    p0: Uint8Array;
    keyEpoch: number;
    ksk: Uint8Array;
    keyBudget: number;
    maxFrameBytes: number;
    requestsPerMinute: number;
  };
  ot: { payload: Uint8Array };
  ot_reply: { payload: Uint8Array };
  spam_request: { messageId: string; lwe: Uint8Array; choices: Uint8Array };
  spam_gc: { messageId: string; gc: Uint8Array };
  spam_done: { messageId: string };
  error: { code: string; message: string };
  ping: { nonce: number };
  pong: { nonce: number };
  bye: Record<string, never>;
  /** lwes: one packed ciphertext when B' = B, else B' LWE ciphertexts back to back (topicCiphertexts); choices: the argmax gc_choice. */
  topic_request: { messageId: string; lwes: Uint8Array; choices: Uint8Array };
  topic_gc: { messageId: string; gc: Uint8Array };
  /** labels: the gc_labels message, one output label per bit of the topic index. */
  topic_labels: { messageId: string; labels: Uint8Array };
  topic_ack: { messageId: string };
  /** optOut: 1 = this user opts out of topic extraction (docs/protocol.md#topic-extraction), 0 = opts back in. */
  topic_setting: { optOut: number };
  topic_setting_ack: { optOut: number };
  /** A spam_request sent again after a reconnect, byte for byte: answered only with the recorded spam_gc. */
  spam_resend: { messageId: string; lwe: Uint8Array; choices: Uint8Array };
  /** blinded: 32 ristretto255 elements of 32 bytes, the items' and padding, back to back (docs/blocklist.md). */
  blocklist_request: { messageId: string; listId: string; listVersion: number; blinded: Uint8Array };
  /** evaluated: k·B for each blinded element B, in the same order. */
  blocklist_reply: { messageId: string; evaluated: Uint8Array };
  /** A topic_request sent again after a reconnect, byte for byte: answered only with the recorded topic_gc. */
  topic_resend: { messageId: string; lwes: Uint8Array; choices: Uint8Array };
}

/** A decoded message: its name, the request id and its fields. */
export type Message = { [K in MessageName]: { name: K; requestId: number } & Messages[K] }[MessageName];

const NAME_BY_TYPE = new Map<number, MessageName>(
  Object.entries(SCHEMAS).map(([name, s]) => [s.type, name as MessageName]),
);

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });
// Control characters (C0, DEL, C1) are never valid in ids or text fields.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Encodes one message into its frame. Fields are checked and measured first,
 * then written into the one buffer the frame needs: a request's ciphertexts
 * are copied once, not into a body and again into the frame.
 */
export function encodeMessage<K extends MessageName>(name: K, requestId: number, fields: Messages[K]): Uint8Array {
  const schema = SCHEMAS[name];
  const values = fields as unknown as Record<string, unknown>;
  const specs = schema.fields as readonly FieldSpec[];
  const bytes: Uint8Array[] = []; // each str and bytes field's payload, in order
  let length = 0;
  for (const f of specs) {
    const v = values[f.name];
    if (f.kind === 'u32') {
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffffffff) {
        throw new RangeError(`${name}.${f.name} must be a u32`);
      }
      length += 4;
    } else if (f.kind === 'str') {
      const s = encoder.encode(String(v));
      if (s.length > f.max) throw new RangeError(`${name}.${f.name} is longer than ${f.max} bytes`);
      bytes.push(s);
      length += 2 + s.length;
    } else {
      const b = v as Uint8Array;
      if (!(b instanceof Uint8Array) || b.length < f.min || b.length > f.max) {
        throw new RangeError(`${name}.${f.name} must be ${f.min}..${f.max} bytes`);
      }
      bytes.push(b);
      length += 4 + b.length;
    }
  }
  const out = newFrame(schema.type, requestId, length);
  const view = new DataView(out.buffer);
  let off = FRAME_HEADER_BYTES;
  let next = 0;
  for (const f of specs) {
    if (f.kind === 'u32') {
      view.setUint32(off, values[f.name] as number);
      off += 4;
      continue;
    }
    const b = bytes[next++];
    if (f.kind === 'str') view.setUint16(off, b.length);
    else view.setUint32(off, b.length);
    off += f.kind === 'str' ? 2 : 4;
    out.set(b, off);
    off += b.length;
  }
  return out;
}

/**
 * Decodes and validates one frame. Throws ProtocolError naming the problem;
 * byte fields are views into `data`.
 */
export function decodeMessage(data: Uint8Array, maxFrameBytes?: number): Message {
  const frame = decodeFrame(data, maxFrameBytes);
  const name = NAME_BY_TYPE.get(frame.type);
  if (!name) throw new ProtocolError('unknown_type', `message type ${frame.type} is unknown`);
  const body = frame.body;
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  const out: Record<string, unknown> = { name, requestId: frame.requestId };
  let off = 0;
  const need = (n: number, field: string): void => {
    if (off + n > body.length) {
      throw new ProtocolError('malformed_frame', `${name}.${field}: body ends ${off + n - body.length} bytes early`);
    }
  };
  for (const f of SCHEMAS[name].fields as readonly FieldSpec[]) {
    if (f.kind === 'u32') {
      need(4, f.name);
      out[f.name] = view.getUint32(off);
      off += 4;
    } else if (f.kind === 'str') {
      need(2, f.name);
      const len = view.getUint16(off);
      off += 2;
      if (len > f.max)
        throw new ProtocolError('bad_field', `${name}.${f.name} is ${len} bytes, at most ${f.max} allowed`);
      need(len, f.name);
      let s: string;
      try {
        s = decoder.decode(body.subarray(off, off + len));
      } catch {
        throw new ProtocolError('bad_field', `${name}.${f.name} is not valid UTF-8`);
      }
      if (CONTROL.test(s)) throw new ProtocolError('bad_field', `${name}.${f.name} contains control characters`);
      out[f.name] = s;
      off += len;
    } else {
      need(4, f.name);
      const len = view.getUint32(off);
      off += 4;
      if (len < f.min || len > f.max) {
        throw new ProtocolError('bad_field', `${name}.${f.name} is ${len} bytes, expected ${f.min}..${f.max}`);
      }
      need(len, f.name);
      out[f.name] = body.subarray(off, off + len);
      off += len;
    }
  }
  if (off !== body.length) {
    throw new ProtocolError('malformed_frame', `${name}: ${body.length - off} trailing bytes after the last field`);
  }
  return out as Message;
}
