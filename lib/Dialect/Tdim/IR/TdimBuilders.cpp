//===- TdimBuilders.cpp - helpers that build tdim programs --------------===//

#include "nerve/Dialect/Tdim/IR/TdimBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace nerve::tdim;

void nerve::tdim::buildRegion(OpBuilder &builder, Location loc, Region &region,
                              TypeRange argTypes, const RegionBodyFn &fn) {
  OpBuilder::InsertionGuard guard(builder);
  Block *block = builder.createBlock(&region, {}, argTypes,
                                     SmallVector<Location>(argTypes.size(), loc));
  SmallVector<Value> results = fn(builder, loc, block->getArguments());
  YieldOp::create(builder, loc, results);
}

MapOp nerve::tdim::buildMap(OpBuilder &builder, Location loc, ValueRange inputs,
                            ValueRange outputs, TypeRange argTypes,
                            const RegionBodyFn &fn) {
  auto map = MapOp::create(builder, loc, inputs, outputs);
  buildRegion(builder, loc, map.getBody(), argTypes, fn);
  return map;
}

SmallVector<Type> nerve::tdim::computeTypesOf(ValueRange inputs) {
  SmallVector<Type> types;
  for (Value v : inputs) {
    Type t = v.getType();
    if (auto tensor = llvm::dyn_cast<TdimTensorType>(t))
      t = getComputeType(tensor.getElementType());
    types.push_back(t);
  }
  return types;
}

Value nerve::tdim::buildElementConversion(OpBuilder &builder, Location loc, Value v,
                                          Type type) {
  if (v.getType() == type)
    return v;
  auto from = llvm::cast<FloatType>(v.getType());
  auto to = llvm::cast<FloatType>(type);
  if (to.getWidth() < from.getWidth())
    return arith::TruncFOp::create(builder, loc, to, v);
  return arith::ExtFOp::create(builder, loc, to, v);
}

Value nerve::tdim::buildSize(OpBuilder &builder, Location loc, Value tensor,
                             DimAttr dim) {
  return SizeOp::create(builder, loc, tensor, dim);
}

Value nerve::tdim::buildAllocLike(OpBuilder &builder, Location loc,
                                  Value sizeSource, ArrayRef<DimAttr> dims,
                                  Type elementType) {
  auto source = llvm::cast<TdimTensorType>(sizeSource.getType());
  SmallVector<int64_t> sizes;
  SmallVector<Value> dynamic;
  for (DimAttr d : dims) {
    int64_t size = source.getSize(d);
    sizes.push_back(size);
    if (size == ShapedType::kDynamic)
      dynamic.push_back(buildSize(builder, loc, sizeSource, d));
  }
  auto type = TdimTensorType::get(dims, sizes, elementType);
  return AllocOp::create(builder, loc, type, dynamic);
}

SmallVector<DimAttr> nerve::tdim::dimsWithout(TdimTensorType type,
                                              ArrayRef<DimAttr> drop) {
  SmallVector<DimAttr> dims;
  for (DimAttr d : type.getDims())
    if (!llvm::is_contained(drop, d))
      dims.push_back(d);
  return dims;
}
