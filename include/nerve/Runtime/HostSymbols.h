//===- HostSymbols.h - runtime functions the JIT'd host code calls -*- C++ -*-===//

#ifndef NERVE_RUNTIME_HOSTSYMBOLS_H
#define NERVE_RUNTIME_HOSTSYMBOLS_H

#include <utility>
#include <vector>

namespace nerve {

/// Symbols nerve provides to JIT-compiled host code: the half-precision
/// conversion helpers LLVM's x86 backend may call (libgcc lacks some of
/// them), and, for the CUDA target, the `mgpu*` GPU runtime functions.
std::vector<std::pair<const char *, void *>> getHostSymbols();

} // namespace nerve

#endif // NERVE_RUNTIME_HOSTSYMBOLS_H
