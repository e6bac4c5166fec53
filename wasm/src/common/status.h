// Status codes of every pmf_* export that can fail: one vocabulary for the
// lattice, garbling and OT layers. wasm/ts/status.ts mirrors this enum (its
// test reads this file), and the TS wrappers throw a CoreError carrying the
// code, so no caller ever has to read an error message to know what failed.
#pragma once

namespace pmf {

enum Status : int {
  kOk = 0,
  kBadLength = -1,    // wrong length or type tag
  kBadVersion = -2,   // unsupported layout version
  kOutOfRange = -3,   // a value is out of range
  kBadParams = -4,    // invalid parameters
  kNoMemory = -5,     // out of wasm memory
  kBadState = -6,     // incomplete model, or an accumulator of another model
  kBadFeature = -7,   // feature row or count out of range
  kNoiseBudget = -8,  // the email's honest noise exceeds the flooding budget
  kBadCircuit = -9,   // malformed circuit, or garbler inputs beyond it
  kBadDelta = -10,    // garbling offset with lsb 0
  kBadBatch = -11,    // OT extension size or block counter out of range
};

}  // namespace pmf
