//===- TdimMemoryOps.cpp - tdim loads, stores, allocations and views ------===//
//
// The ops that read, write, allocate and view one tensor: their syntax
// (indices named by dimension) and verifiers. The ops themselves are
// defined in TdimOps.cpp, with the kernel, typed indices and loops.
//
//===----------------------------------------------------------------------===//

#include "nerve/Dialect/Tdim/IR/TdimOps.h"

#include "nerve/Dialect/Tdim/IR/TdimVerifyUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace nerve::tdim;

static constexpr int64_t kDynamic = ShapedType::kDynamic;

static TdimIndexType indexTypeOf(DimAttr dim) {
  return TdimIndexType::get(dim.getContext(), dim);
}

//===----------------------------------------------------------------------===//
// Loads and stores
//===----------------------------------------------------------------------===//

/// `%t[i = %a, k = %b]`: the index types follow from the names.
static ParseResult
parseNamedIndices(OpAsmParser &parser,
                  SmallVectorImpl<OpAsmParser::UnresolvedOperand> &indices,
                  SmallVectorImpl<Type> &types) {
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
    DimAttr dim;
    OpAsmParser::UnresolvedOperand index;
    if (parseDim(parser, dim) || parser.parseEqual() || parser.parseOperand(index))
      return failure();
    indices.push_back(index);
    types.push_back(indexTypeOf(dim));
    return success();
  });
}

static void printNamedIndices(OpAsmPrinter &p, ValueRange indices) {
  p << "[";
  llvm::interleaveComma(indices, p, [&](Value index) {
    printDim(p, llvm::cast<TdimIndexType>(index.getType()).getDim());
    p << " = " << index;
  });
  p << "]";
}

/// Every dimension of the tensor is indexed exactly once.
static LogicalResult verifyNamedIndices(Operation *op, TdimTensorType type,
                                        ValueRange indices) {
  SmallVector<DimAttr> seen;
  for (Value index : indices) {
    DimAttr dim = llvm::cast<TdimIndexType>(index.getType()).getDim();
    if (!type.hasDim(dim))
      return op->emitOpError() << "tensor has no dimension `" << dim.str()
                               << "` (it has " << type.describeDims() << ")";
    if (llvm::is_contained(seen, dim))
      return op->emitOpError() << "indexes dimension `" << dim.str() << "` twice";
    seen.push_back(dim);
  }
  for (DimAttr dim : type.getDims())
    if (!llvm::is_contained(seen, dim))
      return op->emitOpError() << "does not index dimension `" << dim.str()
                               << "` of the tensor (it has " << type.describeDims()
                               << ")";
  return success();
}

ParseResult LoadOp::parse(OpAsmParser &parser, OperationState &result) {
  OpAsmParser::UnresolvedOperand tensor;
  SmallVector<OpAsmParser::UnresolvedOperand> indices;
  SmallVector<Type> indexTypes;
  Type type;
  if (parser.parseOperand(tensor) || parseNamedIndices(parser, indices, indexTypes) ||
      parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      parser.parseType(type))
    return failure();
  auto tensorType = llvm::dyn_cast<TdimTensorType>(type);
  if (!tensorType)
    return parser.emitError(parser.getCurrentLocation(), "expected a !tdim.tensor type");
  if (parser.resolveOperand(tensor, type, result.operands) ||
      parser.resolveOperands(indices, indexTypes, parser.getCurrentLocation(),
                             result.operands))
    return failure();
  result.addTypes(tensorType.getElementType());
  return success();
}

void LoadOp::print(OpAsmPrinter &p) {
  p << " " << getTensor();
  printNamedIndices(p, getIndices());
  p.printOptionalAttrDict((*this)->getAttrs());
  p << " : " << getTensor().getType();
}

LogicalResult LoadOp::verify() {
  auto type = llvm::cast<TdimTensorType>(getTensor().getType());
  if (getType() != type.getElementType())
    return emitOpError() << "result type " << getType()
                         << " is not the tensor's element type "
                         << type.getElementType();
  return verifyNamedIndices(*this, type, getIndices());
}

ParseResult StoreOp::parse(OpAsmParser &parser, OperationState &result) {
  OpAsmParser::UnresolvedOperand value, tensor;
  SmallVector<OpAsmParser::UnresolvedOperand> indices;
  SmallVector<Type> indexTypes;
  Type type;
  if (parser.parseOperand(value) || parser.parseComma() ||
      parser.parseOperand(tensor) || parseNamedIndices(parser, indices, indexTypes) ||
      parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      parser.parseType(type))
    return failure();
  auto tensorType = llvm::dyn_cast<TdimTensorType>(type);
  if (!tensorType)
    return parser.emitError(parser.getCurrentLocation(), "expected a !tdim.tensor type");
  if (parser.resolveOperand(value, tensorType.getElementType(), result.operands) ||
      parser.resolveOperand(tensor, type, result.operands) ||
      parser.resolveOperands(indices, indexTypes, parser.getCurrentLocation(),
                             result.operands))
    return failure();
  return success();
}

void StoreOp::print(OpAsmPrinter &p) {
  p << " " << getValue() << ", " << getTensor();
  printNamedIndices(p, getIndices());
  p.printOptionalAttrDict((*this)->getAttrs());
  p << " : " << getTensor().getType();
}

LogicalResult StoreOp::verify() {
  auto type = llvm::cast<TdimTensorType>(getTensor().getType());
  if (getValue().getType() != type.getElementType())
    return emitOpError() << "stores a " << getValue().getType() << " into a tensor of "
                         << type.getElementType();
  return verifyNamedIndices(*this, type, getIndices());
}

ParseResult AllocOp::parse(OpAsmParser &parser, OperationState &result) {
  SmallVector<OpAsmParser::UnresolvedOperand> sizes;
  Type type;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseOperandList(sizes, AsmParser::Delimiter::Paren) ||
      parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      parser.parseType(type))
    return failure();
  auto tensor = llvm::dyn_cast<TdimTensorType>(type);
  if (!tensor)
    return parser.emitError(loc, "expected a !tdim.tensor type");
  // Each size is an index of the dynamic dimension it sizes, in list order.
  SmallVector<Type> sizeTypes;
  for (auto [d, s] : llvm::zip(tensor.getDims(), tensor.getSizes()))
    if (s == kDynamic)
      sizeTypes.push_back(indexTypeOf(d));
  if (sizeTypes.size() != sizes.size())
    return parser.emitError(loc) << "tdim.alloc needs " << sizeTypes.size()
                                 << " sizes, one per dynamic dimension, but has "
                                 << sizes.size();
  if (parser.resolveOperands(sizes, sizeTypes, loc, result.operands))
    return failure();
  result.addTypes(type);
  return success();
}

void AllocOp::print(OpAsmPrinter &p) {
  p << "(" << getDynamicSizes() << ")";
  p.printOptionalAttrDict((*this)->getAttrs());
  p << " : " << getType();
}

LogicalResult AllocOp::verify() {
  auto type = llvm::cast<TdimTensorType>(getType());
  if (!llvm::isa<KernelOp>((*this)->getParentOp()))
    return emitOpError("must be at the top level of a kernel (it lives until "
                       "the kernel returns)");
  if (!type.getStrides().empty() || type.getOffset() != 0)
    return emitOpError("makes row-major tensors; write the layout as the order "
                       "of the dimensions, or take a tdim.view of the result");
  SmallVector<DimAttr> dynamic;
  for (auto [d, s] : llvm::zip(type.getDims(), type.getSizes()))
    if (s == kDynamic)
      dynamic.push_back(d);
  if (dynamic.size() != getDynamicSizes().size())
    return emitOpError() << "needs " << dynamic.size()
                         << " sizes, one per dynamic dimension, but has "
                         << getDynamicSizes().size();
  for (auto [d, v] : llvm::zip(dynamic, getDynamicSizes()))
    if (llvm::cast<TdimIndexType>(v.getType()).getDim() != d)
      return emitOpError() << "size of dimension `" << d.str()
                           << "` is given by an index of `"
                           << llvm::cast<TdimIndexType>(v.getType()).getDim().str()
                           << "`";
  return success();
}

//===----------------------------------------------------------------------===//
// Views
//===----------------------------------------------------------------------===//

static TdimTensorType viewType(TdimTensorType source, ArrayRef<DimAttr> dims,
                               ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides,
                               int64_t offset) {
  return TdimTensorType::get(dims, sizes, source.getElementType(), strides, offset);
}

ParseResult SliceOp::parse(OpAsmParser &parser, OperationState &result) {
  OpAsmParser::UnresolvedOperand source, start, length;
  DimAttr dim;
  Type type;
  bool dynamicLength = false;
  int64_t staticLength = 0;
  if (parser.parseOperand(source) || parser.parseKeyword("along") ||
      parseDim(parser, dim) || parser.parseKeyword("from") ||
      parser.parseOperand(start) || parser.parseKeyword("length"))
    return failure();
  OptionalParseResult lengthInt = parser.parseOptionalInteger(staticLength);
  if (!lengthInt.has_value()) {
    if (parser.parseOperand(length))
      return failure();
    dynamicLength = true;
  } else if (failed(*lengthInt)) {
    return failure();
  }
  if (parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      parser.parseType(type))
    return failure();
  Properties &props = result.getOrAddProperties<Properties>();
  props.dim = dim;
  if (!dynamicLength)
    props.staticLength = parser.getBuilder().getI64IntegerAttr(staticLength);
  if (parser.resolveOperand(source, type, result.operands) ||
      parser.resolveOperand(start, indexTypeOf(dim), result.operands) ||
      (dynamicLength &&
       parser.resolveOperand(length, indexTypeOf(dim), result.operands)))
    return failure();
  SmallVector<Type> types;
  if (failed(inferReturnTypes(parser.getContext(), result.location,
                              result.operands, result.attributes.getDictionary(parser.getContext()),
                              result.getRawProperties(), result.regions, types)))
    return failure();
  result.addTypes(types);
  return success();
}

void SliceOp::print(OpAsmPrinter &p) {
  p << " " << getSource() << " along ";
  printDim(p, getDim());
  p << " from " << getStart() << " length ";
  if (getDynamicLength())
    p << getDynamicLength();
  else
    p << *getStaticLength();
  p.printOptionalAttrDict((*this)->getAttrs(),
                          {getDimAttrName(), getStaticLengthAttrName()});
  p << " : " << getSource().getType();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto source = llvm::dyn_cast<TdimTensorType>(adaptor.getSource().getType());
  DimAttr dim = adaptor.getDim();
  if (!source || !dim)
    return failure();
  std::optional<unsigned> pos = source.getPosition(dim);
  if (!pos)
    return emitOptionalError(loc, "'tdim.slice' op tensor has no dimension `",
                             dim.str(), "` (it has ", source.describeDims(), ")");
  SmallVector<int64_t> sizes(source.getSizes());
  sizes[*pos] = adaptor.getStaticLengthAttr() ? adaptor.getStaticLengthAttr().getInt() : kDynamic;
  types.push_back(viewType(source, source.getDims(), sizes,
                           source.getEffectiveStrides(), kDynamic));
  return success();
}

LogicalResult SliceOp::verify() {
  auto source = llvm::cast<TdimTensorType>(getSource().getType());
  if (!getDynamicLength() == !getStaticLength())
    return emitOpError("needs exactly one length, a constant or an index value");
  if (llvm::cast<TdimIndexType>(getStart().getType()).getDim() != getDim())
    return emitOpError() << "start must be an index of `" << getDim().str() << "`";
  if (getStaticLength()) {
    int64_t length = static_cast<int64_t>(*getStaticLength());
    int64_t size = source.getSize(getDim());
    if (length < 0)
      return emitOpError() << "length " << length << " is negative";
    if (size != kDynamic && length > size)
      return emitOpError() << "slice of length " << length << " along `"
                           << getDim().str() << "` exceeds its size " << size;
  }
  return success();
}

ParseResult SelectOp::parse(OpAsmParser &parser, OperationState &result) {
  OpAsmParser::UnresolvedOperand source;
  SmallVector<OpAsmParser::UnresolvedOperand> indices;
  SmallVector<Type> indexTypes;
  Type type;
  if (parser.parseOperand(source) || parseNamedIndices(parser, indices, indexTypes) ||
      parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      parser.parseType(type))
    return failure();
  if (indices.size() != 1)
    return parser.emitError(parser.getCurrentLocation(),
                            "tdim.select picks exactly one dimension");
  if (parser.resolveOperand(source, type, result.operands) ||
      parser.resolveOperands(indices, indexTypes, parser.getCurrentLocation(),
                             result.operands))
    return failure();
  SmallVector<Type> types;
  if (failed(inferReturnTypes(parser.getContext(), result.location, result.operands,
                              result.attributes.getDictionary(parser.getContext()),
                              result.getRawProperties(), result.regions, types)))
    return failure();
  result.addTypes(types);
  return success();
}

void SelectOp::print(OpAsmPrinter &p) {
  p << " " << getSource();
  printNamedIndices(p, getIndex());
  p.printOptionalAttrDict((*this)->getAttrs());
  p << " : " << getSource().getType();
}

LogicalResult SelectOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto source = llvm::dyn_cast<TdimTensorType>(adaptor.getSource().getType());
  auto index = llvm::dyn_cast<TdimIndexType>(adaptor.getIndex().getType());
  if (!source || !index)
    return failure();
  std::optional<unsigned> pos = source.getPosition(index.getDim());
  if (!pos)
    return emitOptionalError(loc, "'tdim.select' op tensor has no dimension `",
                             index.getDim().str(), "` (it has ",
                             source.describeDims(), ")");
  SmallVector<DimAttr> dims(source.getDims());
  SmallVector<int64_t> sizes(source.getSizes());
  SmallVector<int64_t> strides = source.getEffectiveStrides();
  dims.erase(dims.begin() + *pos);
  sizes.erase(sizes.begin() + *pos);
  strides.erase(strides.begin() + *pos);
  types.push_back(viewType(source, dims, sizes, strides, kDynamic));
  return success();
}

LogicalResult SelectOp::verify() { return success(); }

LogicalResult ViewOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto source = llvm::dyn_cast<TdimTensorType>(adaptor.getSource().getType());
  ArrayAttr order = adaptor.getOrder();
  if (!source || !order)
    return failure();
  if (order.size() != source.getRank())
    return emitOptionalError(loc, "'tdim.view' op lists ", order.size(),
                             " dimensions but the tensor has ", source.getRank(),
                             " (", source.describeDims(), ")");
  SmallVector<DimAttr> dims;
  SmallVector<int64_t> sizes, strides;
  SmallVector<int64_t> sourceStrides = source.getEffectiveStrides();
  for (Attribute a : order) {
    auto dim = llvm::dyn_cast<DimAttr>(a);
    std::optional<unsigned> pos = dim ? source.getPosition(dim) : std::nullopt;
    if (!pos)
      return emitOptionalError(loc, "'tdim.view' op tensor has no dimension `",
                               dim ? dim.str() : "?", "` (it has ",
                               source.describeDims(), ")");
    if (llvm::is_contained(dims, dim))
      return emitOptionalError(loc, "'tdim.view' op lists dimension `", dim.str(),
                               "` twice");
    dims.push_back(dim);
    sizes.push_back(source.getSizes()[*pos]);
    strides.push_back(sourceStrides[*pos]);
  }
  types.push_back(viewType(source, dims, sizes, strides, source.getOffset()));
  return success();
}

LogicalResult ViewOp::verify() { return success(); }

OpFoldResult ViewOp::fold(FoldAdaptor) {
  if (getSource().getType() == getType())
    return getSource();
  return {};
}
