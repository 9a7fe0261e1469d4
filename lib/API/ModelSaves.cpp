//===- ModelSaves.cpp - what a neuron model's backward reads ------------===//
//
// A framework calling forward and backward as two launches must decide
// what forward saves before backward runs. The decision is the compiler's:
// the lowering's own planner, asked with everything available, gives the
// fewest streams, and a backward given exactly those lowers without error.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "nerve/Builders.h"
#include "nerve/Conversion/NeuronToTdim/NeuronToTdim.h"
#include "nerve/Dialect/Neuron/IR/NeuronOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace nerve;

namespace {

/// Marks the names in `wanted` among `names`; an unknown one is an error.
Result<llvm::SmallVector<bool>> select(ArrayAttr names, const std::vector<std::string> &wanted,
                                       const std::string &what, const std::string &model) {
  llvm::SmallVector<bool> marks(names.size(), false);
  for (const std::string &w : wanted) {
    auto it = llvm::find_if(names.getAsValueRange<StringAttr>(),
                            [&](StringRef n) { return n == w; });
    if (it == names.getAsValueRange<StringAttr>().end())
      return Status::error("@" + model + " has no " + what + " '" + w + "'");
    marks[std::distance(names.getAsValueRange<StringAttr>().begin(), it)] = true;
  }
  return marks;
}

std::vector<std::string> namesOf(ArrayAttr names, const llvm::SmallVector<bool> &marks) {
  std::vector<std::string> out;
  for (auto [n, m] : llvm::zip(names.getAsValueRange<StringAttr>(), marks))
    if (m)
      out.push_back(n.str());
  return out;
}

} // namespace

Result<NeuronModelSaves> nerve::neuronModelSaves(const std::string &modelSpec,
                                                 const std::string &model,
                                                 const NeuronModelGrads &grads) {
  MLIRContext context(specDialects(), MLIRContext::Threading::DISABLED);
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(modelSpec, "model"),
                               llvm::SMLoc());
  DiagnosticCollector diags(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return diags.fail("the model does not parse");
  auto op = module->lookupSymbol<neuron::ModelOp>(model);
  if (!op)
    return Status::error("the spec defines no neuron.model @" + model);
  Attribute surrogate = parseAttribute(grads.surrogate, &context);
  auto surrogateAttr = llvm::dyn_cast_or_null<neuron::SurrogateAttr>(surrogate);
  if (!surrogateAttr)
    return diags.fail("'" + grads.surrogate + "' is not a #neuron.surrogate<...>");
  Result<llvm::SmallVector<bool>> gradInputs = select(op.getInputs(), grads.inputs, "input", model);
  if (!gradInputs)
    return gradInputs.status();
  Result<llvm::SmallVector<bool>> gradParams =
      select(op.getParams(), grads.params, "parameter", model);
  if (!gradParams)
    return gradParams.status();
  unsigned n = op.getStates().size(), m = op.getInputs().size();
  ModelBackwardQuery query;
  query.hSaved.assign(n, true);
  query.seqSaved.assign(n, true);
  query.inputsGiven.assign(m, true);
  query.gradInputs = *gradInputs;
  query.gradParams = *gradParams;
  query.options = {surrogateAttr, grads.detachReset, grads.detachThreshold};
  FailureOr<ModelBackwardReads> plan =
      planModelBackward(op, query, [&] { return op.emitOpError(); });
  if (failed(plan))
    return diags.fail("the model's backward cannot be derived");
  return NeuronModelSaves{namesOf(op.getStates(), plan->hSeq), namesOf(op.getStates(), plan->seq),
                          namesOf(op.getInputs(), plan->inputs)};
}
