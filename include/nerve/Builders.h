//===- Builders.h - kernels from declarations and expressions ----*- C++ -*-===//
//
// CuPy's ElementwiseKernel and ReductionKernel for nerve: declare the
// arguments with their element types and dimension names, write the body as
// C-like expressions, and get a compiled module (a tdim.map or tdim.reduce
// underneath, through the same compiler and caches as any spec).
//
//   auto k = nerve::elementwiseKernel("axpy", "f32 x[n], f32 y[n], f32 a",
//                                     "f32 z[n]", "z = a * x + y");
//   auto r = nerve::reductionKernel({"l2norm", "f32 x[b, n]", "f32 y[b]",
//                                    /*map=*/"x * x", /*combine=*/"a + b",
//                                    /*identity=*/"0", /*post=*/"sqrt(a)"});
//
// Declarations: `<type> <name>[<dim>, ...]` for tensors (a dimension may
// give its size, `n: 128`; otherwise it is bound at launch), `<type> <name>`
// for scalars; types f32, f16, bf16, f64. The same dimension name in two
// tensors is the same axis; a tensor without one of the output's dimensions
// is broadcast along it.
//
// Expressions compute in f32 (f64 if any argument is f64): numbers,
// names, + - * / (unary -), comparisons < <= > >= == !=, && || !, c ? a : b,
// and exp log sqrt rsqrt tanh sigmoid abs floor ceil min max pow where(c,a,b),
// constants inf and nan. An elementwise body is statements `name = expr`
// separated by `;` or new lines; names that are not outputs are temporaries.
//
//===----------------------------------------------------------------------===//

#ifndef NERVE_BUILDERS_H
#define NERVE_BUILDERS_H

#include "nerve/nerve.h"

namespace nerve {

/// The spec text of an elementwise kernel (see the file comment).
Result<std::string> elementwiseSpec(const std::string &name, const std::string &inputs,
                                    const std::string &outputs, const std::string &body);

/// Builds and compiles an elementwise kernel; its one entry is `name`.
Result<std::shared_ptr<Module>> elementwiseKernel(const std::string &name,
                                                  const std::string &inputs,
                                                  const std::string &outputs,
                                                  const std::string &body,
                                                  const CompileOptions &options = {});

/// A reduction, as CuPy's ReductionKernel has it: `map` turns the inputs at
/// one point into a value, `combine` merges two values `a` and `b`,
/// `identity` is combine's neutral value, and `post` turns the result `a`
/// (and `count`, the number of elements combined) into the output. The
/// output's dimensions are kept; every other input dimension is reduced.
struct ReductionKernelSpec {
  std::string name;
  std::string inputs;
  std::string output;
  std::string map;
  std::string combine;
  std::string identity;
  std::string post = "a";
};

/// The spec text of a reduction kernel.
Result<std::string> reductionSpec(const ReductionKernelSpec &reduction);

/// Builds and compiles a reduction kernel; its one entry is `reduction.name`.
Result<std::shared_ptr<Module>> reductionKernel(const ReductionKernelSpec &reduction,
                                                const CompileOptions &options = {});

} // namespace nerve

#endif // NERVE_BUILDERS_H
