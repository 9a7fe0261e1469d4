//===- DeviceMirror.h - device copies of host kernel arguments ---*- C++ -*-===//

#ifndef NERVE_RUNTIME_DEVICEMIRROR_H
#define NERVE_RUNTIME_DEVICEMIRROR_H

#include "nerve/Runtime/CudaDriver.h"
#include "nerve/nerve.h"

#include <memory>

namespace nerve {

/// Bytes from the start of a tensor argument's buffer to the end of its
/// last element (offset, padding and strides included).
Result<size_t> spanBytes(const ArgInfo &info, const Arg &arg);

/// Device copies of the tensors of a host argument list: allocated and
/// filled by `create`, copied back by `copyOutputs`, freed on destruction.
class DeviceMirror {
public:
  static Result<std::unique_ptr<DeviceMirror>> create(const EntryInfo &entry,
                                                      const std::vector<Arg> &hostArgs);
  ~DeviceMirror();

  /// The argument list with device pointers in place of host ones.
  const std::vector<Arg> &args() const { return deviceArgs; }
  /// Copies every output back into the host buffers it mirrors.
  Status copyOutputs();

private:
  DeviceMirror() = default;
  cuda::Device *device = nullptr;
  const EntryInfo *entry = nullptr;
  std::vector<Arg> hostArgs, deviceArgs;
  std::vector<std::pair<cuda::CUdeviceptr, size_t>> buffers;
};

} // namespace nerve

#endif // NERVE_RUNTIME_DEVICEMIRROR_H
