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

/// Keeps the kernel called `entry` alone in `module` and `entries` (all of
/// them when `entry` is empty); an error if there is none of that name.
Status selectEntry(mlir::ModuleOp module, std::vector<EntryInfo> &entries,
                   const std::string &entry);

/// The nerve-specialize-shapes entries (kernel:arg=SIZExSIZE) that give
/// every argument of `entries` the sizes `staticSizes` names, which
/// `entries` then report as static. An error for a negative size, a name
/// no argument has, or a size an argument declares otherwise.
Result<std::vector<std::string>>
bindStaticSizes(std::vector<EntryInfo> &entries,
                const std::vector<std::pair<std::string, int64_t>> &staticSizes);

} // namespace nerve

#endif // NERVE_LIB_API_ENTRIES_H
