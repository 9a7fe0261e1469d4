//===- ChipOption.h - a pass's `chip` option as a profile ---------*- C++ -*-===//
//
// The passes that take a chip name (`chip=sm_90`) read it here: its
// profile, or the one error message for a name nerve does not compile for,
// on the operation the pass runs on.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_TARGET_CHIPOPTION_H
#define NERVE_TARGET_CHIPOPTION_H

#include "nerve/Target/ChipProfile.h"

#include "mlir/IR/Operation.h"

namespace nerve {

/// The profile of the chip named `name`, or null after emitting the error
/// on `op`.
inline const ChipProfile *chipOption(mlir::Operation *op, llvm::StringRef name) {
  std::optional<GpuChip> parsed = parseChip(name);
  if (!parsed) {
    op->emitError() << unknownChipMessage(name);
    return nullptr;
  }
  return &chipProfile(*parsed);
}

} // namespace nerve

#endif // NERVE_TARGET_CHIPOPTION_H
