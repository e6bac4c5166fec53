#include "gc/circuit.h"

#include <cstring>
#include <vector>

namespace pmf::gc {

bool check_circuit(const uint8_t* data, size_t len, CircuitView* out) {
  if (len < 16 || len % 4 != 0) return false;
  const uint32_t* w = reinterpret_cast<const uint32_t*>(data);
  CircuitView c{};
  c.nwires = w[0];
  c.ninputs = w[1];
  c.ngates = w[2];
  c.noutputs = w[3];
  if (c.nwires > (1u << 24) || c.ngates > (1u << 24) || c.noutputs > (1u << 24)) return false;
  if (c.ninputs > c.nwires) return false;
  if (len != 16 + 16ull * c.ngates + 4ull * c.noutputs) return false;
  c.gates = w + 4;
  c.outputs = c.gates + 4ull * c.ngates;
  std::vector<uint8_t> defined(c.nwires, 0);
  for (uint32_t i = 0; i < c.ninputs; ++i) defined[i] = 1;
  for (uint32_t g = 0; g < c.ngates; ++g) {
    const uint32_t* gate = c.gates + 4ull * g;
    uint32_t op = gate[0], a = gate[1], b = gate[2], o = gate[3];
    if (op > kNot || a >= c.nwires || o >= c.nwires || !defined[a] || defined[o]) return false;
    if (op != kNot && (b >= c.nwires || !defined[b])) return false;
    defined[o] = 1;
    if (op == kAnd) ++c.nand;
  }
  for (uint32_t i = 0; i < c.noutputs; ++i)
    if (c.outputs[i] >= c.nwires || !defined[c.outputs[i]]) return false;
  *out = c;
  return true;
}

}  // namespace pmf::gc
