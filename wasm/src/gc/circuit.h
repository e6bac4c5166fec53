// Boolean circuits as they sit in linear memory (built by wasm/ts/gc-circuit.ts):
//   u32 nwires, ninputs, ngates, noutputs,
//   ngates x (u32 op, u32 a, u32 b, u32 out), noutputs x u32 wire.
// Wires 0..ninputs-1 are the inputs (garbler's first, then the evaluator's).
#pragma once

#include <cstddef>
#include <cstdint>

namespace pmf::gc {

enum Op : uint32_t { kAnd = 0, kXor = 1, kNot = 2 };

struct CircuitView {
  uint32_t nwires, ninputs, ngates, noutputs;
  const uint32_t* gates;    // 4 words per gate
  const uint32_t* outputs;  // noutputs wires
  uint32_t nand;            // AND gates, counted by check_circuit
};

// Parses and validates a circuit of len bytes: sizes, operand ranges, every
// wire written once and read only after it is written. Returns false if bad.
bool check_circuit(const uint8_t* data, size_t len, CircuitView* out);

}  // namespace pmf::gc
