//===- FloatArith.h - arith/math ops over one float type ---------*- C++ -*-===//
//
// Shorthand for building the scalar code of neurons and surrogates: every
// value has the one compute type `type`.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_LIB_CONVERSION_NEURONTOTDIM_FLOATARITH_H
#define NERVE_LIB_CONVERSION_NEURONTOTDIM_FLOATARITH_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"

namespace nerve {

struct FloatArith {
  mlir::OpBuilder &b;
  mlir::Location loc;
  mlir::FloatType type;

  mlir::Value c(double v) {
    return mlir::arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, v));
  }
  mlir::Value add(mlir::Value x, mlir::Value y) { return mlir::arith::AddFOp::create(b, loc, x, y); }
  mlir::Value sub(mlir::Value x, mlir::Value y) { return mlir::arith::SubFOp::create(b, loc, x, y); }
  mlir::Value mul(mlir::Value x, mlir::Value y) { return mlir::arith::MulFOp::create(b, loc, x, y); }
  mlir::Value div(mlir::Value x, mlir::Value y) { return mlir::arith::DivFOp::create(b, loc, x, y); }
  mlir::Value min(mlir::Value x, mlir::Value y) {
    return mlir::arith::MinimumFOp::create(b, loc, x, y);
  }
  mlir::Value abs(mlir::Value x) { return mlir::math::AbsFOp::create(b, loc, x); }
  mlir::Value exp(mlir::Value x) { return mlir::math::ExpOp::create(b, loc, x); }
  mlir::Value cmp(mlir::arith::CmpFPredicate p, mlir::Value x, mlir::Value y) {
    return mlir::arith::CmpFOp::create(b, loc, p, x, y);
  }
  mlir::Value select(mlir::Value cond, mlir::Value x, mlir::Value y) {
    return mlir::arith::SelectOp::create(b, loc, cond, x, y);
  }
};

} // namespace nerve

#endif // NERVE_LIB_CONVERSION_NEURONTOTDIM_FLOATARITH_H
