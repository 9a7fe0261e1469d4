//===- TdimTypes.cpp - tdim types ---------------------------------------===//

#include "nerve/Dialect/Tdim/IR/TdimTypes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace nerve::tdim;

#define GET_TYPEDEF_CLASSES
#include "nerve/Dialect/Tdim/IR/TdimTypes.cpp.inc"

void TdimDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "nerve/Dialect/Tdim/IR/TdimTypes.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

bool nerve::tdim::isValidElementType(Type type) {
  if (type.isF32() || type.isF16() || type.isBF16() || type.isF64())
    return true;
  return type.isSignlessInteger(1) || type.isSignlessInteger(8) ||
         type.isSignlessInteger(32) || type.isSignlessInteger(64);
}

Type nerve::tdim::getComputeType(Type type) {
  if (type.isF16() || type.isBF16())
    return Float32Type::get(type.getContext());
  return type;
}

bool nerve::tdim::isCompatibleElementValue(Type value, Type element) {
  if (value == element)
    return true;
  auto v = llvm::dyn_cast<FloatType>(value);
  auto e = llvm::dyn_cast<FloatType>(element);
  return v && e && v.getWidth() > e.getWidth();
}

//===----------------------------------------------------------------------===//
// TdimTensorType
//===----------------------------------------------------------------------===//

static constexpr int64_t kDynamic = ShapedType::kDynamic;

/// Row-major strides of `sizes`; kDynamic once an inner size is dynamic.
static SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> sizes) {
  SmallVector<int64_t> strides(sizes.size(), 1);
  int64_t running = 1;
  for (int i = static_cast<int>(sizes.size()) - 1; i >= 0; --i) {
    strides[i] = running;
    if (running == kDynamic || sizes[i] == kDynamic) {
      running = kDynamic;
      continue;
    }
    if (llvm::MulOverflow(running, std::max<int64_t>(sizes[i], 1), running))
      running = kDynamic;
  }
  return strides;
}

TdimTensorType TdimTensorType::getCanonical(function_ref<InFlightDiagnostic()> emitError,
                                  MLIRContext *context, ArrayRef<DimAttr> dims,
                                  ArrayRef<int64_t> sizes, Type elementType,
                                  ArrayRef<int64_t> strides, int64_t offset) {
  // Spelled-out row-major strides are the default layout: drop them so that
  // equal layouts are equal types. (Row-major strides that depend on a size
  // bound at launch stay `?`, which says less, and are kept.)
  if (!strides.empty() && strides.size() == sizes.size() &&
      llvm::none_of(strides, [](int64_t s) { return s == kDynamic; }) &&
      llvm::equal(strides, rowMajorStrides(sizes)))
    strides = {};
  return Base::getChecked(emitError, context, dims, sizes, elementType,
                          strides, offset);
}

LogicalResult TdimTensorType::verify(function_ref<InFlightDiagnostic()> emitError,
                                 ArrayRef<DimAttr> dims,
                                 ArrayRef<int64_t> sizes, Type elementType,
                                 ArrayRef<int64_t> strides, int64_t offset) {
  if (dims.size() != sizes.size())
    return emitError() << "tensor has " << dims.size() << " dimensions but "
                       << sizes.size() << " sizes";
  if (!isValidElementType(elementType))
    return emitError() << "tensor element type " << elementType
                       << " is not one of f32, f16, bf16, f64, i1, i8, i32, i64";
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (!d)
      return emitError() << "tensor dimension #" << i << " is missing";
    for (DimAttr other : dims.take_front(i))
      if (other.sameAxis(d))
        return emitError() << "tensor lists dimension `" << d.getName().getValue()
                           << "` twice (as `" << other.str() << "` and `"
                           << d.str() << "`)";
    if (sizes[i] < 0 && sizes[i] != kDynamic)
      return emitError() << "dimension `" << d.str() << "` has negative size "
                         << sizes[i];
  }
  if (!strides.empty() && strides.size() != dims.size())
    return emitError() << "tensor has " << dims.size() << " dimensions but "
                       << strides.size() << " strides";
  if (offset < 0 && offset != kDynamic)
    return emitError() << "tensor offset " << offset << " is negative";
  int64_t elements = 1;
  for (int64_t s : sizes)
    if (s != kDynamic && llvm::MulOverflow(elements, s, elements))
      return emitError() << "layout spans more than 2^63 elements";
  if (strides.empty())
    return success();

  // Strides: non-negative, and no two elements at one address.
  SmallVector<unsigned> order;
  for (auto [i, s] : llvm::enumerate(strides)) {
    if (s < 0 && s != kDynamic)
      return emitError() << "dimension `" << dims[i].str() << "` has negative stride "
                         << s;
    if (s == 0 && sizes[i] != 1)
      return emitError() << "dimension `" << dims[i].str()
                         << "` has stride 0, so its elements overlap; broadcast "
                            "with tdim.map instead";
    order.push_back(i);
  }
  // With every stride and size static, sort by stride and require each
  // stride to step past everything the finer dimensions reach.
  bool allStatic = llvm::none_of(strides, [](int64_t s) { return s == kDynamic; }) &&
                   llvm::none_of(sizes, [](int64_t s) { return s == kDynamic; });
  if (!allStatic)
    return success();
  llvm::stable_sort(order, [&](unsigned a, unsigned b) { return strides[a] < strides[b]; });
  int64_t reach = 0; // largest offset the finer dimensions reach
  for (unsigned i : order) {
    if (sizes[i] <= 1)
      continue;
    if (strides[i] <= reach)
      return emitError() << "strides overlap: dimension `" << dims[i].str()
                         << "` has stride " << strides[i]
                         << " but the dimensions inside it already span "
                         << reach + 1 << " elements";
    int64_t span;
    if (llvm::MulOverflow(strides[i], sizes[i] - 1, span) ||
        llvm::AddOverflow(reach, span, reach))
      return emitError() << "layout spans more than 2^63 elements";
  }
  if (offset != kDynamic && llvm::AddOverflow(reach, offset, reach))
    return emitError() << "layout spans more than 2^63 elements";
  return success();
}

std::optional<unsigned> TdimTensorType::getPosition(DimAttr dim) const {
  for (auto [i, d] : llvm::enumerate(getDims()))
    if (d == dim)
      return i;
  return std::nullopt;
}

SmallVector<int64_t> TdimTensorType::getEffectiveStrides() const {
  if (!getStrides().empty())
    return llvm::to_vector(getStrides());
  return rowMajorStrides(getSizes());
}

bool TdimTensorType::hasStaticShape() const {
  return llvm::none_of(getSizes(), [](int64_t s) { return s == kDynamic; });
}

std::string TdimTensorType::describeDims() const {
  return nerve::tdim::describeDims(getDims());
}

TdimTensorType TdimTensorType::withElementType(Type type) const {
  return TdimTensorType::get(getDims(), getSizes(), type, getStrides(), getOffset());
}

static ParseResult parseSizeOrDynamic(AsmParser &parser, int64_t &value) {
  if (succeeded(parser.parseOptionalQuestion())) {
    value = kDynamic;
    return success();
  }
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseInteger(value))
    return failure();
  if (value < 0)
    return parser.emitError(loc, "expected a non-negative integer or `?`");
  return success();
}

static void printSizeOrDynamic(AsmPrinter &printer, int64_t value) {
  if (value == kDynamic)
    printer << "?";
  else
    printer << value;
}

Type TdimTensorType::parse(AsmParser &parser) {
  SmallVector<DimAttr> dims;
  SmallVector<int64_t> sizes, strides;
  Type elementType;
  int64_t offset = 0;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        DimAttr dim;
        int64_t size;
        if (parseDim(parser, dim) || parser.parseColon() ||
            parseSizeOrDynamic(parser, size))
          return failure();
        dims.push_back(dim);
        sizes.push_back(size);
        return success();
      }) ||
      parser.parseComma() || parser.parseType(elementType))
    return {};
  bool sawStrides = false;
  while (succeeded(parser.parseOptionalComma())) {
    if (succeeded(parser.parseOptionalKeyword("strides"))) {
      sawStrides = true;
      if (parser.parseEqual() ||
          parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
            int64_t s;
            if (succeeded(parser.parseOptionalQuestion())) {
              strides.push_back(kDynamic);
              return success();
            }
            if (parser.parseInteger(s))
              return failure();
            strides.push_back(s);
            return success();
          }))
        return {};
      continue;
    }
    if (succeeded(parser.parseOptionalKeyword("offset"))) {
      if (parser.parseEqual() || parseSizeOrDynamic(parser, offset))
        return {};
      continue;
    }
    parser.emitError(parser.getCurrentLocation(), "expected `strides` or `offset`");
    return {};
  }
  if (parser.parseGreater())
    return {};
  if (sawStrides && strides.empty() && !dims.empty()) {
    parser.emitError(loc, "`strides = []` given for a tensor with dimensions");
    return {};
  }
  return TdimTensorType::getCanonical([&] { return parser.emitError(loc); },
                                      parser.getContext(), dims, sizes, elementType, strides,
                                      offset);
}

void TdimTensorType::print(AsmPrinter &printer) const {
  printer << "<[";
  llvm::interleaveComma(llvm::zip(getDims(), getSizes()), printer, [&](auto pair) {
    printDim(printer, std::get<0>(pair));
    printer << ": ";
    printSizeOrDynamic(printer, std::get<1>(pair));
  });
  printer << "], " << getElementType();
  if (!getStrides().empty()) {
    printer << ", strides = [";
    llvm::interleaveComma(getStrides(), printer,
                          [&](int64_t s) { printSizeOrDynamic(printer, s); });
    printer << "]";
  }
  if (getOffset() != 0) {
    printer << ", offset = ";
    printSizeOrDynamic(printer, getOffset());
  }
  printer << ">";
}
