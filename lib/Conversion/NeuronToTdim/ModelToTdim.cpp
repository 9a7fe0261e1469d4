//===- ModelToTdim.cpp - model neurons to tdim loops --------------------===//
//
// neuron.forward: for every neuron (parallel): states = init
//                   for t in time: step (ModelStep.h); store s, seq, h_seq
//                 store last
// neuron.backward: for every neuron (parallel): carry[i] = grad_last[i] or 0
//                   for t in time, reversed: the step's vector-Jacobian
//                     product at (states before t, x[t], params, h[t]) for
//                     gradients (grad_spike[t], grad_seq[i][t] + carry[i]);
//                     grad_ins[t] = its input part, carry = its state part,
//                     parameter partials += its parameter part
//                   grad_init = carry; per-neuron partials stored
//                 grad_params = partials summed over the dimensions each
//                 parameter is broadcast along (tdim.reduce, fixed order)
//
// Backward reads only what the derivatives need. It derives them once, in
// a detached block over every value a step could read, removes what the
// gradients asked for do not use, and loads the rest: a state's charged
// value from `h_seq`, the states before step t from `seq` at t - 1 or by
// resetting `h_seq` at t - 1 (constant threshold), inputs from `ins`.
//
//===----------------------------------------------------------------------===//

#include "ModelStep.h"
#include "TimeLoops.h"

#include "nerve/Conversion/NeuronToTdim/NeuronToTdim.h"
#include "nerve/Dialect/Neuron/IR/NeuronOps.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace nerve;
using namespace nerve::neuron;

namespace {

StringRef nameAt(ArrayAttr names, unsigned i) {
  return llvm::cast<StringAttr>(names[i]).getValue();
}

/// A parameter for one neuron: its tensor at the neuron's indices along the
/// tensor's own dimensions, or the model's value.
Value loadParam(NeuronBuilder &nb, Value tensor, double value, ArrayRef<DimAttr> dims,
                ValueRange neuron) {
  if (!tensor)
    return nb.c(value);
  auto type = llvm::cast<TdimTensorType>(tensor.getType());
  SmallVector<Value> at;
  for (auto [d, index] : llvm::zip(dims, neuron))
    if (type.hasDim(d))
      at.push_back(index);
  return nb.load(tensor, at);
}

/// Every parameter of `model` for one neuron, as `lookup` binds them.
template <typename OpTy>
SmallVector<Value> loadParams(NeuronBuilder &nb, OpTy op, ModelOp model, ArrayRef<DimAttr> dims,
                              ValueRange neuron) {
  SmallVector<Value> params;
  for (unsigned k = 0; k < model.getParams().size(); ++k)
    params.push_back(loadParam(nb, op.lookup("params", nameAt(model.getParams(), k)),
                               model.paramValue(k), dims, neuron));
  return params;
}

/// State `i`'s initial value for one neuron: its `init` tensor or the
/// model's value.
template <typename OpTy>
Value initialState(NeuronBuilder &nb, OpTy op, ModelOp model, unsigned i, ValueRange neuron) {
  if (Value init = op.lookup("init", nameAt(model.getStates(), i)))
    return nb.load(init, neuron);
  return nb.c(model.stateInit(i));
}

/// The first operand whose group is one of `groups` (in that order).
template <typename OpTy>
Value referenceOf(OpTy op, ArrayRef<StringRef> groups) {
  for (StringRef g : groups)
    for (auto [i, role] : llvm::enumerate(op.getRoles()))
      if (llvm::cast<StringAttr>(role).getValue().split(':').first == g)
        return op->getOperand(i);
  return {};
}

/// The product a one-input model neuron can be the scanning epilogue of:
/// it writes its spikes alone (parameters bound to tensors become `with`
/// inputs).
tdim::ContractOp fusableProduct(ForwardOp op, ModelOp model) {
  if (model.getInputs().size() != 1)
    return {};
  for (Attribute role : op.getRoles()) {
    StringRef group = llvm::cast<StringAttr>(role).getValue().split(':').first;
    if (group != "ins" && group != "outs" && group != "params")
      return {};
  }
  return productFeeding(op.lookup("ins", nameAt(model.getInputs(), 0)), op, op.lookup("outs"));
}

/// x = lhs . rhs ; model neuron(x) -> one contraction scanning time whose
/// epilogue is the model's step (buildModelStep), every state carried.
void fuseIntoProduct(ForwardOp op, ModelOp model, tdim::ContractOp product) {
  IRRewriter rewriter(op);
  Location loc = op.getLoc();
  FloatType type = model.getComputeType();
  unsigned n = model.getStates().size();
  Value x = op.lookup("ins", nameAt(model.getInputs(), 0));
  Type xElement = llvm::cast<TdimTensorType>(x.getType()).getElementType();
  SmallVector<Value> with;
  SmallVector<Attribute> carry;
  for (unsigned k = 0; k < model.getParams().size(); ++k)
    if (Value p = op.lookup("params", nameAt(model.getParams(), k)))
      with.push_back(p);
  for (unsigned i = 0; i < n; ++i)
    carry.push_back(rewriter.getFloatAttr(type, model.stateInit(i)));
  auto fused = tdim::ContractOp::create(rewriter, loc, product.getLhs(), product.getRhs(), with,
                                        op.lookup("outs"), /*accumulate=*/false, op.getTime(),
                                        rewriter.getArrayAttr(carry));
  fused->setDiscardableAttrs(product->getDiscardableAttrDictionary());
  SmallVector<Type> argTypes{tdim::getComputeType(xElement)};
  for (Value p : with)
    argTypes.push_back(llvm::cast<TdimTensorType>(p.getType()).getElementType());
  argTypes.append(n, type);
  Block *body = rewriter.createBlock(&fused.getEpilogue(), {}, argTypes,
                                     SmallVector<Location>(argTypes.size(), loc));
  NeuronBuilder nb{{rewriter, loc, type}};
  Value input = nb.convert(nb.convert(body->getArgument(0), xElement), type);
  SmallVector<Value> params;
  for (unsigned k = 0, w = 1; k < model.getParams().size(); ++k)
    params.push_back(op.lookup("params", nameAt(model.getParams(), k))
                         ? nb.convert(body->getArgument(w++), type)
                         : nb.c(model.paramValue(k)));
  SmallVector<Value> pre(body->getArguments().take_back(n));
  SmallVector<Value> inputs{input};
  ModelStepValues v = buildModelStep(nb, model, {pre, inputs, params, {}});
  Type spikeElement =
      llvm::cast<TdimTensorType>(op.lookup("outs").getType()).getElementType();
  SmallVector<Value> results{nb.spikeValue(v.fired, spikeElement)};
  results.append(v.next.begin(), v.next.end());
  tdim::YieldOp::create(rewriter, loc, results);
  Operation *alloc = x.getDefiningOp();
  rewriter.eraseOp(op);
  rewriter.eraseOp(product);
  if (alloc->use_empty())
    rewriter.eraseOp(alloc);
}

LogicalResult lowerModelForward(ForwardOp op, int64_t timeBlock) {
  ModelOp model = op.getModelOp();
  if (tdim::ContractOp product = fusableProduct(op, model)) {
    fuseIntoProduct(op, model, product);
    return success();
  }
  IRRewriter rewriter(op);
  Location loc = op.getLoc();
  DimAttr time = op.getTime();
  FloatType type = model.getComputeType();
  ArrayAttr states = model.getStates(), inputs = model.getInputs();
  unsigned n = states.size();
  Value ref = op.lookup("ins", nameAt(inputs, 0));
  SmallVector<DimAttr> dims = neuronDims(ref, time);

  buildParallelNest(rewriter, loc, ref, dims, [&](OpBuilder &b, ValueRange neuron) {
    NeuronBuilder nb{{b, loc, type}};
    SmallVector<Value> params = loadParams(nb, op, model, dims, neuron);
    SmallVector<Value> init;
    for (unsigned i = 0; i < n; ++i)
      init.push_back(initialState(nb, op, model, i, neuron));
    Value steps = tdim::buildSize(b, loc, ref, time);
    auto load = [&](OpBuilder &b, Value t) -> StepValues {
      NeuronBuilder nb{{b, loc, type}};
      StepValues loaded;
      for (unsigned j = 0; j < inputs.size(); ++j)
        loaded.push_back(nb.load(op.lookup("ins", nameAt(inputs, j)), withTime(neuron, t)));
      return loaded;
    };
    auto compute = [&](OpBuilder &b, Value t, const StepValues &loaded, const StepValues *,
                       bool, ValueRange carried) -> SmallVector<Value> {
      NeuronBuilder nb{{b, loc, type}};
      SmallVector<Value> pre(carried);
      ModelStepValues v = buildModelStep(nb, model, {pre, loaded, params, {}});
      SmallVector<Value> at = withTime(neuron, t);
      nb.storeSpike(v.fired, op.lookup("outs"), at);
      for (unsigned i = 0; i < n; ++i) {
        if (Value seq = op.lookup("seq", nameAt(states, i)))
          nb.store(v.next[i], seq, at);
        if (Value h = op.lookup("h_seq", nameAt(states, i)))
          nb.store(v.charged[i], h, at);
      }
      return v.next;
    };
    SequenceFacts facts = sequenceFacts(ref, time);
    int64_t block = chooseForwardBlock(timeBlock, facts);
    int64_t perBlock = block * static_cast<int64_t>(inputs.size());
    SmallVector<Value> last =
        buildTimeLoop(b, loc, time, steps, init, block, /*reverse=*/false, load, compute,
                      pipelineBlocks(facts, block, perBlock, kPipelinedValues));
    for (unsigned i = 0; i < n; ++i)
      if (Value l = op.lookup("last", nameAt(states, i)))
        nb.store(last[i], l, neuron);
  });
  rewriter.eraseOp(op);
  return success();
}

//===----------------------------------------------------------------------===//
// Backward
//===----------------------------------------------------------------------===//

/// The step's gradients derived once, in a detached block whose arguments
/// are everything a step could read: [pre (n), inputs (m), params (P),
/// charged (n), grad_spike, grad_next (n)]. What the requested gradients do
/// not use is removed, so its arguments' uses say what backward must read.
struct StepDerivation {
  std::unique_ptr<Block> block;
  ModelStepGrads grads;
  unsigned n = 0, m = 0, p = 0;
  /// Parameters whose gradient is asked for, in order.
  SmallVector<unsigned> gradParams;

  unsigned preArg(unsigned i) const { return i; }
  unsigned inputArg(unsigned j) const { return n + j; }
  unsigned paramArg(unsigned k) const { return n + m + k; }
  unsigned chargedArg(unsigned i) const { return n + m + p + i; }
  unsigned spikeArg() const { return 2 * n + m + p; }
  unsigned nextArg(unsigned i) const { return 2 * n + m + p + 1 + i; }
  bool uses(unsigned arg) const { return !block->getArgument(arg).use_empty(); }
};

/// The step's gradients for `query`, derived once (see StepDerivation).
FailureOr<StepDerivation> deriveStep(ModelOp model, const ModelBackwardQuery &query,
                                     Location loc) {
  StepDerivation d;
  unsigned n = model.getStates().size(), m = model.getInputs().size(),
           p = model.getParams().size();
  d.n = n, d.m = m, d.p = p;
  d.block = std::make_unique<Block>();
  Block *block = d.block.get();
  FloatType type = model.getComputeType();
  for (unsigned a = 0; a < 3 * n + m + p + 1; ++a)
    block->addArgument(type, loc);
  OpBuilder b(model.getContext());
  b.setInsertionPointToEnd(block);
  auto args = [&](unsigned from, unsigned count) {
    return SmallVector<Value>(block->getArguments().slice(from, count));
  };
  SmallVector<Value> pre = args(0, n), inputs = args(n, m), params = args(n + m, p);
  SmallVector<Value> charged(n), next = args(d.nextArg(0), n);
  for (unsigned i = 0; i < n; ++i)
    if (query.hSaved[i])
      charged[i] = block->getArgument(d.chargedArg(i));
  Value spike = query.gradSpike ? block->getArgument(d.spikeArg()) : Value();
  FailureOr<ModelStepGrads> grads =
      buildModelStepGrads(FloatArith{b, loc, type}, model, {pre, inputs, params, charged},
                          {spike, next}, query.options);
  if (failed(grads))
    return failure();
  d.grads = std::move(*grads);
  SmallVector<Value> live(d.grads.pre);
  for (unsigned j = 0; j < m; ++j)
    if (query.gradInputs[j])
      live.push_back(d.grads.inputs[j]);
  for (unsigned k = 0; k < p; ++k)
    if (query.gradParams[k]) {
      live.push_back(d.grads.params[k]);
      d.gradParams.push_back(k);
    }
  pruneTo(*block, live);
  return d;
}

/// What each step reads, and where the states before it come from; an
/// error naming what to pass when forward's saved values fall short. A
/// state's earlier value comes from resetting its saved charged value
/// (constant threshold) when that is read anyway or its `seq` is not at
/// hand, else from `seq`.
FailureOr<ModelBackwardReads> planReads(ModelOp model, const StepDerivation &d,
                                        const ModelBackwardQuery &q,
                                        function_ref<InFlightDiagnostic()> emitError) {
  unsigned n = d.n;
  bool constantThreshold = model.getVThreshold().has_value();
  ModelBackwardReads plan;
  plan.hSeq.assign(n, false);
  plan.seq.assign(n, false);
  plan.inputs.assign(d.m, false);
  plan.pre.assign(n, ModelBackwardReads::Pre::Unused);
  for (unsigned i = 0; i < n; ++i)
    plan.hSeq[i] = d.uses(d.chargedArg(i));
  for (unsigned i = 0; i < n; ++i) {
    if (!d.uses(d.preArg(i)))
      continue;
    StringRef state = nameAt(model.getStates(), i);
    bool canReset = constantThreshold && q.hSaved[i] && q.hSaved[0];
    if (canReset && (plan.hSeq[i] || !q.seqSaved[i])) {
      plan.pre[i] = ModelBackwardReads::Pre::Reset;
      plan.hSeq[i] = plan.hSeq[0] = true;
    } else if (q.seqSaved[i]) {
      plan.pre[i] = ModelBackwardReads::Pre::Seq;
      plan.seq[i] = true;
    } else {
      return emitError() << "needs state `" << state << "` before each step: pass "
                         << "forward's `seq(" << state << " = ...)`"
                         << (constantThreshold ? " or `h_seq(" + state.str() +
                                                     " = ...)` with the firing state's"
                                               : std::string())
                         << " to backward";
    }
  }
  for (unsigned j = 0; j < d.m; ++j) {
    if (!d.uses(d.inputArg(j)))
      continue;
    StringRef input = nameAt(model.getInputs(), j);
    if (!q.inputsGiven[j])
      return emitError() << "the derivatives of @" << model.getSymName() << " read input `"
                         << input << "`: pass it as `ins(" << input << " = ...)`";
    plan.inputs[j] = true;
  }
  return plan;
}

class ModelBackwardLowering {
public:
  explicit ModelBackwardLowering(BackwardOp op)
      : op(op), model(op.getModelOp()), loc(op.getLoc()), time(op.getTime()),
        type(model.getComputeType()), n(model.getStates().size()),
        m(model.getInputs().size()), p(model.getParams().size()) {}

  LogicalResult lower(int64_t timeBlock) {
    ref = referenceOf(op, {"h_seq", "seq", "ins", "grad_spike", "grad_seq", "grad_ins"});
    dims = neuronDims(ref, time);
    if (failed(deriveAndPlan()))
      return failure();
    IRRewriter rewriter(op);
    SmallVector<Value> partials = allocatePartials(rewriter);
    buildParallelNest(rewriter, loc, ref, dims, [&](OpBuilder &b, ValueRange neuron) {
      lowerNeuron(b, neuron, partials, timeBlock);
    });
    reduceParamGrads(rewriter, partials);
    rewriter.eraseOp(op);
    return success();
  }

private:
  /// Where a step's loaded values sit in its StepValues.
  enum class Stream { Charged, Seq, Input, GradSpike, GradSeq };
  struct Read {
    Stream stream;
    unsigned index;
    Value tensor;
  };

  using PreSource = ModelBackwardReads::Pre;

  BackwardOp op;
  ModelOp model;
  Location loc;
  DimAttr time;
  FloatType type;
  unsigned n, m, p;
  Value ref;
  SmallVector<DimAttr> dims;
  StepDerivation derivation;
  SmallVector<PreSource> preSource;
  SmallVector<Read> reads;

  Value lookupState(StringRef group, unsigned i) {
    return op.lookup(group, nameAt(model.getStates(), i));
  }

  /// The query this op makes: what forward saved and which gradients it
  /// asks for.
  ModelBackwardQuery query() {
    ModelBackwardQuery q;
    for (unsigned i = 0; i < n; ++i) {
      q.hSaved.push_back(bool(lookupState("h_seq", i)));
      q.seqSaved.push_back(bool(lookupState("seq", i)));
    }
    for (unsigned j = 0; j < m; ++j) {
      StringRef input = nameAt(model.getInputs(), j);
      q.inputsGiven.push_back(bool(op.lookup("ins", input)));
      q.gradInputs.push_back(bool(op.lookup("grad_ins", input)));
    }
    for (unsigned k = 0; k < p; ++k)
      q.gradParams.push_back(bool(op.lookup("grad_params", nameAt(model.getParams(), k))));
    q.gradSpike = bool(op.lookup("grad_spike"));
    q.options = {op.getSurrogate(), op.getDetachReset(), op.getDetachThreshold()};
    return q;
  }

  LogicalResult deriveAndPlan() {
    ModelBackwardQuery q = query();
    FailureOr<StepDerivation> d = deriveStep(model, q, loc);
    if (failed(d))
      return failure();
    derivation = std::move(*d);
    FailureOr<ModelBackwardReads> plan =
        planReads(model, derivation, q, [&] { return op.emitOpError(); });
    if (failed(plan))
      return failure();
    preSource = plan->pre;
    for (unsigned i = 0; i < n; ++i)
      if (plan->hSeq[i])
        reads.push_back({Stream::Charged, i, lookupState("h_seq", i)});
    for (unsigned i = 0; i < n; ++i)
      if (plan->seq[i])
        reads.push_back({Stream::Seq, i, lookupState("seq", i)});
    for (unsigned j = 0; j < m; ++j)
      if (plan->inputs[j])
        reads.push_back({Stream::Input, j, op.lookup("ins", nameAt(model.getInputs(), j))});
    if (Value g = op.lookup("grad_spike"))
      reads.push_back({Stream::GradSpike, 0, g});
    for (unsigned i = 0; i < n; ++i)
      if (Value g = lookupState("grad_seq", i))
        reads.push_back({Stream::GradSeq, i, g});
    return success();
  }

  /// The loaded value of `stream` `index` in `values`, or null.
  Value find(const StepValues &values, Stream stream, unsigned index) {
    for (auto [r, v] : llvm::zip(reads, values))
      if (r.stream == stream && r.index == index)
        return v;
    return {};
  }

  /// Per-neuron partial sums of parameter gradients that are reduced over
  /// some dimensions afterwards (null where the gradient is stored as is).
  SmallVector<Value> allocatePartials(OpBuilder &b) {
    SmallVector<Value> partials;
    for (unsigned k : derivation.gradParams) {
      Value grad = op.lookup("grad_params", nameAt(model.getParams(), k));
      auto gradType = llvm::cast<TdimTensorType>(grad.getType());
      bool whole = gradType.getRank() == dims.size();
      partials.push_back(whole ? Value() : tdim::buildAllocLike(b, loc, ref, dims, type));
    }
    return partials;
  }

  void reduceParamGrads(IRRewriter &rewriter, ArrayRef<Value> partials) {
    for (auto [k, partial] : llvm::zip(derivation.gradParams, partials)) {
      if (!partial)
        continue;
      Value grad = op.lookup("grad_params", nameAt(model.getParams(), k));
      auto gradType = llvm::cast<TdimTensorType>(grad.getType());
      SmallVector<Attribute> over;
      for (DimAttr d : dims)
        if (!gradType.hasDim(d))
          over.push_back(d);
      auto reduce = tdim::ReduceOp::create(
          rewriter, loc, ValueRange{partial}, ValueRange{grad}, rewriter.getArrayAttr(over),
          rewriter.getArrayAttr({rewriter.getFloatAttr(type, 0.0)}));
      tdim::buildRegion(rewriter, loc, reduce.getCombine(), {type, type},
                        [](OpBuilder &b, Location l, ValueRange a) {
                          return SmallVector<Value>{arith::AddFOp::create(b, l, a[0], a[1])};
                        });
    }
  }

  /// The states before step t from the values step t - 1 loaded, or
  /// `init` at t = 0 (when `mayBeFirst`).
  SmallVector<Value> statesBefore(NeuronBuilder &nb, Value t, const StepValues &previous,
                                  bool mayBeFirst, ArrayRef<Value> init,
                                  ArrayRef<Value> params) {
    SmallVector<Value> pre(n);
    Value isFirst;
    if (mayBeFirst) {
      auto timeType = tdim::TdimIndexType::get(nb.b.getContext(), time);
      Value zero = tdim::ConstOp::create(nb.b, loc, timeType, nb.b.getI64IntegerAttr(0));
      isFirst = tdim::CmpOp::create(nb.b, loc, tdim::CmpPredicate::eq, t, zero);
    }
    for (unsigned i = 0; i < n; ++i) {
      if (preSource[i] == PreSource::Unused)
        continue;
      Value v;
      if (preSource[i] == PreSource::Seq) {
        v = find(previous, Stream::Seq, i);
      } else {
        // The previous step's reset, from its saved charged values and
        // the (constant) threshold.
        Value theta = nb.c(model.getVThreshold()->convertToDouble());
        Value h0 = find(previous, Stream::Charged, 0);
        Value fired = nb.cmp(arith::CmpFPredicate::OGE, nb.sub(h0, theta), nb.c(0.0));
        v = resetState(nb, model, i, find(previous, Stream::Charged, i), fired, theta, params);
      }
      pre[i] = isFirst ? nb.select(isFirst, init[i], v) : v;
    }
    return pre;
  }

  /// The loads of step t - 1 (clamped at 0: then unused) for a step whose
  /// previous step's loads are not at hand.
  StepValues loadPrevious(OpBuilder &b, ValueRange neuron, Value t) {
    auto timeType = tdim::TdimIndexType::get(b.getContext(), time);
    Value index = tdim::ToIndexOp::create(b, loc, t);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value prev = arith::SubIOp::create(b, loc, arith::MaxUIOp::create(b, loc, index, one), one);
    return loadStep(b, neuron, tdim::FromIndexOp::create(b, loc, timeType, prev));
  }

  StepValues loadStep(OpBuilder &b, ValueRange neuron, Value t) {
    NeuronBuilder nb{{b, loc, type}};
    StepValues values;
    for (const Read &r : reads)
      values.push_back(nb.load(r.tensor, withTime(neuron, t)));
    return values;
  }

  /// What the walk of one neuron shares between steps.
  struct Walk {
    ValueRange neuron;
    SmallVector<Value> params, init;
  };

  SmallVector<Value> computeStep(OpBuilder &b, const Walk &walk, Value t,
                                 const StepValues &loaded, const StepValues *previous,
                                 bool mayBeFirst, ValueRange carried) {
    NeuronBuilder nb{{b, loc, type}};
    bool needPre = llvm::any_of(preSource, [](PreSource s) { return s != PreSource::Unused; });
    SmallVector<Value> pre(n);
    if (needPre) {
      StepValues before = previous ? *previous : loadPrevious(b, walk.neuron, t);
      pre = statesBefore(nb, t, before, mayBeFirst || !previous, walk.init, walk.params);
    }
    Block *block = derivation.block.get();
    IRMapping mapping;
    Value zero = nb.c(0.0);
    for (BlockArgument a : block->getArguments())
      mapping.map(a, zero);
    for (unsigned i = 0; i < n; ++i) {
      if (pre[i])
        mapping.map(block->getArgument(derivation.preArg(i)), pre[i]);
      if (Value h = find(loaded, Stream::Charged, i))
        mapping.map(block->getArgument(derivation.chargedArg(i)), h);
      Value g = carried[i];
      if (Value upstream = find(loaded, Stream::GradSeq, i))
        g = nb.add(upstream, g);
      mapping.map(block->getArgument(derivation.nextArg(i)), g);
    }
    for (unsigned j = 0; j < m; ++j)
      if (Value x = find(loaded, Stream::Input, j))
        mapping.map(block->getArgument(derivation.inputArg(j)), x);
    for (unsigned k = 0; k < p; ++k)
      mapping.map(block->getArgument(derivation.paramArg(k)), walk.params[k]);
    if (Value g = find(loaded, Stream::GradSpike, 0))
      mapping.map(block->getArgument(derivation.spikeArg()), g);
    for (Operation &o : *block)
      b.clone(o, mapping);
    auto result = [&](Value v) { return v ? mapping.lookupOrDefault(v) : zero; };

    SmallVector<Value> at = withTime(walk.neuron, t);
    for (unsigned j = 0; j < m; ++j)
      if (Value gx = op.lookup("grad_ins", nameAt(model.getInputs(), j)))
        nb.store(result(derivation.grads.inputs[j]), gx, at);
    SmallVector<Value> next;
    for (unsigned i = 0; i < n; ++i)
      next.push_back(result(derivation.grads.pre[i]));
    for (auto [slot, k] : llvm::enumerate(derivation.gradParams))
      next.push_back(nb.add(carried[n + slot], result(derivation.grads.params[k])));
    return next;
  }

  void lowerNeuron(OpBuilder &b, ValueRange neuron, ArrayRef<Value> partials,
                   int64_t timeBlock) {
    NeuronBuilder nb{{b, loc, type}};
    Walk walk;
    walk.neuron = neuron;
    walk.params = loadParams(nb, op, model, dims, neuron);
    for (unsigned i = 0; i < n; ++i)
      walk.init.push_back(preSource[i] == PreSource::Unused
                              ? Value()
                              : initialState(nb, op, model, i, neuron));
    // Each state's carried gradient starts from its last value's.
    SmallVector<Value> inits(n + derivation.gradParams.size(), nb.c(0.0));
    for (unsigned i = 0; i < n; ++i)
      if (Value g = lookupState("grad_last", i))
        inits[i] = nb.load(g, neuron);
    Value steps = tdim::buildSize(b, loc, ref, time);
    auto load = [&](OpBuilder &sb, Value t) { return loadStep(sb, neuron, t); };
    auto compute = [&](OpBuilder &sb, Value t, const StepValues &loaded,
                       const StepValues *previous, bool mayBeFirst, ValueRange carried) {
      return computeStep(sb, walk, t, loaded, previous, mayBeFirst, carried);
    };
    int64_t streams = std::max<int64_t>(reads.size(), 1);
    SequenceFacts facts = sequenceFacts(ref, time);
    int64_t block = chooseBackwardBlock(timeBlock, facts, streams);
    SmallVector<Value> results = buildTimeLoop(
        b, loc, time, steps, inits, block, /*reverse=*/true, load, compute,
        pipelineBlocks(facts, block, streams * block, kBackwardPipelinedValues));
    for (unsigned i = 0; i < n; ++i)
      if (Value g = lookupState("grad_init", i))
        nb.store(results[i], g, neuron);
    for (auto [slot, k] : llvm::enumerate(derivation.gradParams)) {
      Value sum = results[n + slot];
      if (partials[slot])
        tdim::StoreOp::create(b, loc, sum, partials[slot], neuron);
      else
        nb.store(sum, op.lookup("grad_params", nameAt(model.getParams(), k)), neuron);
    }
  }
};

} // namespace

FailureOr<ModelBackwardReads>
nerve::planModelBackward(ModelOp model, const ModelBackwardQuery &query,
                         function_ref<InFlightDiagnostic()> emitError) {
  FailureOr<StepDerivation> d = deriveStep(model, query, model.getLoc());
  if (failed(d))
    return failure();
  return planReads(model, *d, query, emitError);
}

LogicalResult nerve::lowerModelNeuron(Operation *op, int64_t timeBlock) {
  if (auto forward = llvm::dyn_cast<ForwardOp>(op))
    return lowerModelForward(forward, timeBlock);
  return ModelBackwardLowering(llvm::cast<BackwardOp>(op)).lower(timeBlock);
}
