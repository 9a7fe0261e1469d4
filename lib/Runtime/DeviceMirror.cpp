//===- DeviceMirror.cpp - device copies of host kernel arguments --------===//

#include "nerve/Runtime/DeviceMirror.h"

#include <algorithm>

using namespace nerve;
using namespace nerve::cuda;

Result<size_t> nerve::spanBytes(const ArgInfo &info, const Arg &arg) {
  size_t rank = arg.sizes.size();
  std::vector<int64_t> strides = arg.strides.empty() ? info.strides : arg.strides;
  if (strides.size() != rank ||
      std::any_of(strides.begin(), strides.end(), [](int64_t s) { return s < 0; })) {
    strides.assign(rank, 1);
    for (size_t d = rank; d-- > 1;)
      strides[d - 1] = strides[d] * std::max<int64_t>(arg.sizes[d], 1);
  }
  uint64_t span = static_cast<uint64_t>(std::max<int64_t>(info.offset, 0));
  bool overflow = false;
  for (size_t d = 0; d < rank; ++d) {
    if (arg.sizes[d] <= 0)
      return size_t(0);
    uint64_t reach;
    overflow |= __builtin_mul_overflow(static_cast<uint64_t>(arg.sizes[d] - 1),
                                       static_cast<uint64_t>(strides[d]), &reach);
    overflow |= __builtin_add_overflow(span, reach, &span);
  }
  uint64_t bytes;
  overflow |= __builtin_mul_overflow(span + 1, static_cast<uint64_t>(byteWidth(info.dtype)),
                                     &bytes);
  if (overflow)
    return Status::error("argument %" + info.name + " is too large to address");
  return static_cast<size_t>(bytes);
}

Result<std::unique_ptr<DeviceMirror>> DeviceMirror::create(const EntryInfo &entry,
                                                           const std::vector<Arg> &hostArgs) {
  Result<Device *> device = Device::get();
  if (!device)
    return device.status();
  if (Status s = (*device)->makeCurrent(); !s)
    return s;
  if (Status s = (*device)->usable(); !s)
    return s;
  if (hostArgs.size() != entry.args.size())
    return Status::error("kernel @" + entry.name + " takes " + std::to_string(entry.args.size()) +
                         " arguments but " + std::to_string(hostArgs.size()) + " were given");
  std::unique_ptr<DeviceMirror> mirror(new DeviceMirror());
  mirror->device = *device;
  mirror->entry = &entry;
  mirror->hostArgs = hostArgs;
  mirror->deviceArgs = hostArgs;
  mirror->buffers.assign(hostArgs.size(), {0, 0});
  const DriverAPI &api = mirror->device->api();
  for (size_t i = 0; i < hostArgs.size(); ++i) {
    const ArgInfo &info = entry.args[i];
    if (!info.isTensor || hostArgs[i].kind != Arg::Kind::Tensor)
      continue;
    Result<size_t> span = spanBytes(info, hostArgs[i]);
    if (!span)
      return span.status();
    if (*span == 0)
      continue;
    CUdeviceptr ptr = 0;
    std::string what = "allocating " + std::to_string(*span) + " bytes of device memory for %" +
                       info.name;
    if (Status s = mirror->device->check(api.cuMemAlloc(&ptr, *span), what.c_str()); !s)
      return s;
    mirror->buffers[i] = {ptr, *span};
    if (Status s = mirror->device->check(api.cuMemcpyHtoD(ptr, hostArgs[i].data, *span),
                                         "copying an argument to the device");
        !s)
      return s;
    mirror->deviceArgs[i].data = reinterpret_cast<void *>(ptr);
  }
  return mirror;
}

Status DeviceMirror::copyOutputs() {
  const DriverAPI &api = device->api();
  std::string what = "running kernel @" + entry->name + " on the GPU";
  if (Status s = device->check(api.cuCtxSynchronize(), what.c_str()); !s)
    return s;
  for (size_t i = 0; i < hostArgs.size(); ++i)
    if (entry->args[i].isOutput && buffers[i].first)
      if (Status s = device->check(
              api.cuMemcpyDtoH(hostArgs[i].data, buffers[i].first, buffers[i].second),
              "copying an output back from the device");
          !s)
        return s;
  return Status();
}

DeviceMirror::~DeviceMirror() {
  if (!device)
    return;
  for (auto &[ptr, bytes] : buffers)
    if (ptr)
      device->api().cuMemFree(ptr);
}
