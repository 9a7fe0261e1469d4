//===- TdimTypes.h - tdim types ----------------------------------*- C++ -*-===//

#ifndef NERVE_DIALECT_TDIM_IR_TDIMTYPES_H
#define NERVE_DIALECT_TDIM_IR_TDIMTYPES_H

#include "nerve/Dialect/Tdim/IR/TdimAttrs.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Types.h"

#define GET_TYPEDEF_CLASSES
#include "nerve/Dialect/Tdim/IR/TdimTypes.h.inc"

namespace nerve::tdim {

/// Whether `type` may be the element type of a tdim tensor: f32, f16, bf16,
/// f64, i1, i8, i32, i64.
bool isValidElementType(mlir::Type type);

/// The type arithmetic on elements of `type` uses by default: f32 for f16
/// and bf16 storage, the type itself otherwise.
mlir::Type getComputeType(mlir::Type type);

/// Whether a value of type `value` can stand for an element of type
/// `element`: the same type, or a float at least as wide (the element is
/// extended on load and rounded on store).
bool isCompatibleElementValue(mlir::Type value, mlir::Type element);

} // namespace nerve::tdim

#endif // NERVE_DIALECT_TDIM_IR_TDIMTYPES_H
