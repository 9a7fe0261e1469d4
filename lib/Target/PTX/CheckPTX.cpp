//===- CheckPTX.cpp - no PTX with unresolved functions ------------------===//

#include "nerve/Target/PTX/Passes.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace nerve {
#define GEN_PASS_DEF_CHECKPTX
#include "nerve/Target/PTX/Passes.h.inc"
} // namespace nerve

using namespace mlir;

namespace {
struct CheckPTXPass : nerve::impl::CheckPTXBase<CheckPTXPass> {
  void runOnOperation() override {
    getOperation().walk([&](gpu::BinaryOp binary) {
      for (Attribute a : binary.getObjects()) {
        auto object = llvm::cast<gpu::ObjectAttr>(a);
        StringRef ptx = object.getObject().getValue();
        SmallVector<StringRef> externs;
        size_t pos = 0;
        while ((pos = ptx.find(".extern .func", pos)) != StringRef::npos) {
          StringRef line = ptx.substr(pos).take_until([](char c) { return c == '\n'; });
          StringRef name = line.rtrim(" ;\r").rsplit(' ').second;
          externs.push_back(name.take_until([](char c) { return c == '('; }));
          pos += line.size();
        }
        if (!externs.empty()) {
          InFlightDiagnostic d = binary.emitError()
                                 << "the PTX of @" << binary.getSymName()
                                 << " calls functions nothing provides (";
          llvm::interleaveComma(externs, d);
          d << "); link libdevice (CUDA_HOME) or use functions nerve expands";
          signalPassFailure();
        }
      }
    });
  }
};
} // namespace
