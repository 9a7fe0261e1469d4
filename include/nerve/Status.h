//===- Status.h - errors as values -------------------------------*- C++ -*-===//
//
// nerve's public API reports failure as a value with a message, never by
// aborting or throwing. Only the C++ standard library is needed to use it.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_STATUS_H
#define NERVE_STATUS_H

#include <optional>
#include <string>
#include <utility>

namespace nerve {

/// Success, or an error with a one-line message in the user's terms.
class [[nodiscard]] Status {
public:
  Status() = default;
  static Status error(std::string message) { return Status(std::move(message)); }

  bool ok() const { return !message_.has_value(); }
  explicit operator bool() const { return ok(); }
  /// The message of an error; empty for success.
  const std::string &message() const {
    static const std::string none;
    return message_ ? *message_ : none;
  }

private:
  explicit Status(std::string message) : message_(std::move(message)) {}
  std::optional<std::string> message_;
};

/// A value, or the error that prevented it.
template <typename T>
class [[nodiscard]] Result {
public:
  Result(T value) : value_(std::move(value)) {}
  Result(Status status) : status_(std::move(status)) {
    if (status_.ok())
      status_ = Status::error("internal error: a Result was built from success");
  }

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Status &status() const { return status_; }
  const std::string &message() const { return status_.message(); }

  T &value() { return *value_; }
  const T &value() const { return *value_; }
  T &operator*() { return *value_; }
  T *operator->() { return &*value_; }
  const T *operator->() const { return &*value_; }
  /// Moves the value out (call only when ok()).
  T take() { return std::move(*value_); }

private:
  std::optional<T> value_;
  Status status_;
};

} // namespace nerve

#endif // NERVE_STATUS_H
