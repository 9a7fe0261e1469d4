//===- TdimAttrs.cpp - tdim attributes ----------------------------------===//

#include "nerve/Dialect/Tdim/IR/TdimAttrs.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace nerve::tdim;

#include "nerve/Dialect/Tdim/IR/TdimEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "nerve/Dialect/Tdim/IR/TdimAttrs.cpp.inc"

void TdimDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "nerve/Dialect/Tdim/IR/TdimAttrs.cpp.inc"
      >();
}

std::string DimAttr::str() const {
  std::string text = getName().str();
  if (isFold())
    text += "/" + std::to_string(getFactor());
  return text;
}

LogicalResult DimAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                              StringAttr name, int64_t factor) {
  if (!name || name.getValue().empty())
    return emitError() << "a dimension needs a name";
  if (factor < 1)
    return emitError() << "dimension `" << name.getValue()
                       << "` is folded by " << factor
                       << "; a fold factor must be a positive integer";
  return success();
}

ParseResult nerve::tdim::parseDim(AsmParser &parser, DimAttr &dim) {
  SMLoc loc = parser.getCurrentLocation();
  std::string name;
  if (failed(parser.parseKeywordOrString(&name)))
    return parser.emitError(loc, "expected a dimension name such as `i` or `i/64`");
  int64_t factor = 1;
  while (succeeded(parser.parseOptionalSlash())) {
    SMLoc factorLoc = parser.getCurrentLocation();
    int64_t f = 0;
    if (failed(parser.parseInteger(f)))
      return failure();
    if (f < 1)
      return parser.emitError(factorLoc)
             << "dimension `" << name << "` is folded by " << f
             << "; a fold factor must be a positive integer";
    if (factor > std::numeric_limits<int64_t>::max() / f)
      return parser.emitError(factorLoc, "fold factor overflows 64 bits");
    factor *= f;
  }
  dim = DimAttr::get(parser.getContext(), name, factor);
  return success();
}

void nerve::tdim::printDim(AsmPrinter &printer, DimAttr dim) {
  printer.printKeywordOrString(dim.getName().getValue());
  if (dim.isFold())
    printer << "/" << dim.getFactor();
}

Attribute DimAttr::parse(AsmParser &parser, Type) {
  DimAttr dim;
  if (parser.parseLess() || parseDim(parser, dim) || parser.parseGreater())
    return {};
  return dim;
}

void DimAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printDim(printer, *this);
  printer << ">";
}

ParseResult nerve::tdim::parseDimList(AsmParser &parser, ArrayAttr &dims) {
  SmallVector<Attribute> list;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        DimAttr dim;
        if (parseDim(parser, dim))
          return failure();
        list.push_back(dim);
        return success();
      }))
    return failure();
  dims = parser.getBuilder().getArrayAttr(list);
  return success();
}

void nerve::tdim::printDimList(AsmPrinter &printer, Operation *,
                               ArrayAttr dims) {
  printer << "[";
  llvm::interleaveComma(dims, printer, [&](Attribute a) {
    printDim(printer, llvm::cast<DimAttr>(a));
  });
  printer << "]";
}

std::string nerve::tdim::describeDims(ArrayRef<DimAttr> dims) {
  if (dims.empty())
    return "no dimensions";
  std::string text;
  for (auto [i, d] : llvm::enumerate(dims))
    text += (i ? ", `" : "`") + d.str() + "`";
  return text;
}
