//===- EffectsTest.cpp - what tdim and neuron ops declare they touch -------===//
//
// Every tensor an op reads declares a read and every tensor it writes a
// write, so passes that move or drop ops (fusion, CSE, DCE) see them.
//
//===----------------------------------------------------------------------===//

#include "nerve/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"

#include <set>

using namespace mlir;

namespace {

constexpr const char *kSpec = R"mlir(
!m = !tdim.tensor<[r: 4, c: 8], f32>
!v = !tdim.tensor<[c: 8], f32>
tdim.kernel @ops(%x: !m, %b: !v, %w: !tdim.tensor<[], f32>)
    -> (%y: !m, %z: !m, %s: !tdim.tensor<[r: 4], f32>, %n: !m, %spike: !m, %g: !m,
        %gw: !tdim.tensor<[], f32>) {
  tdim.map ins(%x, %b : !m, !v) outs(%y : !m) {
  ^bb0(%p: f32, %q: f32):
    %a = arith.addf %p, %q : f32
    tdim.yield %a : f32
  }
  tdim.reduce ins(%x : !m) outs(%s : !tdim.tensor<[r: 4], f32>) over [c] init [0.0 : f32]
    combine {
    ^bb0(%p: f32, %q: f32):
      %a = arith.addf %p, %q : f32
      tdim.yield %a : f32
    }
  tdim.broadcast ins(%b : !v) outs(%z : !m)
  tdim.softmax ins(%x : !m) outs(%n : !m) over c
  tdim.layer_norm ins(%x : !m) weight(%b : !v) outs(%n : !m) over [c] eps 1.0e-05
  neuron.plif ins(%x : !m) w(%w : !tdim.tensor<[], f32>) outs(%spike : !m) v_seq(%y : !m)
      time r {v_threshold = 1.0, v_reset = 0.0}
  neuron.plif_grad ins(%y : !m) w(%w : !tdim.tensor<[], f32>) grad_spike(%x : !m)
      outs(%g : !m) grad_w(%gw : !tdim.tensor<[], f32>) time r
      {v_threshold = 1.0, v_reset = 0.0, surrogate = #neuron.surrogate<sigmoid, alpha = 4.0>}
  tdim.return
}
)mlir";

struct ValueLess {
  bool operator()(Value a, Value b) const {
    return a.getAsOpaquePointer() < b.getAsOpaquePointer();
  }
};
using Values = std::set<Value, ValueLess>;

/// The values `op` declares `Effect` on.
template <typename Effect>
Values touched(Operation *op) {
  Values values;
  auto iface = dyn_cast<MemoryEffectOpInterface>(op);
  if (!iface)
    return values;
  SmallVector<MemoryEffects::EffectInstance> effects;
  iface.getEffects(effects);
  for (const MemoryEffects::EffectInstance &e : effects)
    if (isa<Effect>(e.getEffect()) && e.getValue())
      values.insert(e.getValue());
  return values;
}

TEST(Effects, InputsAreReadAndOutputsWritten) {
  DialectRegistry registry;
  nerve::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kSpec, &context);
  ASSERT_TRUE(module);
  Block &body = module->getBody()->front().getRegion(0).front();
  Value x = body.getArgument(0), b = body.getArgument(1), w = body.getArgument(2);
  Value y = body.getArgument(3), z = body.getArgument(4), s = body.getArgument(5);
  Value n = body.getArgument(6), spike = body.getArgument(7), g = body.getArgument(8);
  Value gw = body.getArgument(9);
  struct Want {
    llvm::StringRef op;
    Values reads, writes;
  };
  std::vector<Want> wants = {
      {"tdim.map", {x, b}, {y}},         {"tdim.reduce", {x}, {s}},
      {"tdim.broadcast", {b}, {z}},      {"tdim.softmax", {x}, {n}},
      {"tdim.layer_norm", {x, b}, {n}},  {"neuron.plif", {x, w}, {spike, y}},
      {"neuron.plif_grad", {y, w, x}, {g, gw}},
  };
  size_t seen = 0;
  for (Operation &op : body.without_terminator()) {
    ASSERT_LT(seen, wants.size());
    const Want &want = wants[seen++];
    EXPECT_EQ(op.getName().getStringRef(), want.op);
    EXPECT_EQ(touched<MemoryEffects::Read>(&op), want.reads) << want.op.str();
    EXPECT_EQ(touched<MemoryEffects::Write>(&op), want.writes) << want.op.str();
  }
  EXPECT_EQ(seen, wants.size());
}

} // namespace
