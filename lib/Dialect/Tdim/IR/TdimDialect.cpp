//===- TdimDialect.cpp - the typed-dimension dialect --------------------===//

#include "nerve/Dialect/Tdim/IR/TdimDialect.h"

#include "nerve/Dialect/Tdim/IR/TdimOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace nerve::tdim;

#include "nerve/Dialect/Tdim/IR/TdimDialect.cpp.inc"

void TdimDialect::initialize() {
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "nerve/Dialect/Tdim/IR/TdimOps.cpp.inc"
      >();
}

Operation *TdimDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  auto intAttr = llvm::dyn_cast<IntegerAttr>(value);
  if (intAttr && llvm::isa<TdimIndexType>(type))
    return ConstOp::create(builder, loc, type, intAttr);
  return nullptr;
}
