//===- TdimBuilders.h - helpers that build tdim programs ----------*- C++ -*-===//
//
// Small builders shared by the passes that produce tdim IR (decomposition of
// composite ops, the neuron lowering): element regions from lambdas, sizes
// and allocations by dimension name.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_DIALECT_TDIM_IR_TDIMBUILDERS_H
#define NERVE_DIALECT_TDIM_IR_TDIMBUILDERS_H

#include "nerve/Dialect/Tdim/IR/TdimOps.h"

#include "mlir/IR/Builders.h"

#include <functional>

namespace nerve::tdim {

/// Computes the values a region yields from its arguments.
using RegionBodyFn = std::function<llvm::SmallVector<mlir::Value>(
    mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;

/// Fills the empty `region` with one block taking `argTypes`, whose body
/// `fn` builds and whose `tdim.yield` returns what `fn` returns.
void buildRegion(mlir::OpBuilder &builder, mlir::Location loc,
                 mlir::Region &region, mlir::TypeRange argTypes,
                 const RegionBodyFn &fn);

/// `tdim.map ins(inputs) outs(outputs)` whose region takes `argTypes`
/// (element or compute types of the inputs) and is built by `fn`.
MapOp buildMap(mlir::OpBuilder &builder, mlir::Location loc,
               mlir::ValueRange inputs, mlir::ValueRange outputs,
               mlir::TypeRange argTypes, const RegionBodyFn &fn);

/// The region argument types a map or reduce uses for `inputs` when it
/// computes in the compute type (f32 for f16/bf16 storage).
llvm::SmallVector<mlir::Type> computeTypesOf(mlir::ValueRange inputs);

/// The extent of `dim` in `tensor`, as a `!tdim.index<dim>`.
mlir::Value buildSize(mlir::OpBuilder &builder, mlir::Location loc,
                      mlir::Value tensor, DimAttr dim);

/// A row-major `tdim.alloc` over `dims` (in that order) holding
/// `elementType`, sized like the same dimensions of `sizeSource`.
mlir::Value buildAllocLike(mlir::OpBuilder &builder, mlir::Location loc,
                           mlir::Value sizeSource,
                           llvm::ArrayRef<DimAttr> dims,
                           mlir::Type elementType);

/// Float `v` converted to `type` as a store and a load would: rounded to a
/// narrower type, extended to a wider one.
mlir::Value buildElementConversion(mlir::OpBuilder &builder, mlir::Location loc,
                                   mlir::Value v, mlir::Type type);

/// The dimensions of `type` without those in `drop`, in `type`'s order.
llvm::SmallVector<DimAttr> dimsWithout(TdimTensorType type,
                                       llvm::ArrayRef<DimAttr> drop);

} // namespace nerve::tdim

#endif // NERVE_DIALECT_TDIM_IR_TDIMBUILDERS_H
