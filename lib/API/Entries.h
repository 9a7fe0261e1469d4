//===- Entries.h - kernel signatures as the API reports them -----*- C++ -*-===//

#ifndef NERVE_LIB_API_ENTRIES_H
#define NERVE_LIB_API_ENTRIES_H

#include "nerve/nerve.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>

namespace nerve {

/// The API's name for an MLIR element type, if it has one.
std::optional<DType> dtypeOf(mlir::Type type);

/// The signature of every tdim.kernel in `module`, in order.
std::vector<EntryInfo> collectEntries(mlir::ModuleOp module);

} // namespace nerve

#endif // NERVE_LIB_API_ENTRIES_H
