//===- TdimDialect.cpp - the typed-dimension dialect ------------------------===//

#include "nerve/Dialect/Tdim/IR/TdimDialect.h"

using namespace nerve::tdim;

#include "dialects/tdim/TdimDialect.cpp.inc"

void TdimDialect::initialize() {}
