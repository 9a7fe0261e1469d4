//===- TensorOps.cpp - maps, reductions and contractions to loop nests --===//
//
// The independent dimensions of each op become one scf.parallel, ordered as
// the first output is laid out (innermost = contiguous) so that neighbouring
// iterations touch neighbouring addresses; reductions are loop nests inside
// it, combining in a fixed order, the outermost a fold.for that states how
// partial results merge when the combine is more than one op.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "nerve/Dialect/Fold/IR/Fold.h"
#include "nerve/Dialect/GPUMap/IR/GPUMap.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;
using namespace nerve;
using namespace nerve::tdim;
using namespace nerve::tdim_to_scf;

/// Builds `scf.parallel` over `dims` (sizes from `memref` of type `type`) and
/// calls `body` inside it with the induction variables; without dimensions
/// the body is built in place.
static void buildParallel(OpBuilder &b, Location loc, Value memref,
                          TdimTensorType type, ArrayRef<DimAttr> dims,
                          function_ref<void(OpBuilder &, Location, ValueRange)> body) {
  if (dims.empty()) {
    body(b, loc, {});
    return;
  }
  SmallVector<Value> lbs, ubs, steps;
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  for (DimAttr d : dims) {
    lbs.push_back(zero);
    steps.push_back(one);
    ubs.push_back(buildDimSize(b, loc, memref, type, d));
  }
  scf::ParallelOp::create(b, loc, lbs, ubs, steps,
                          [&](OpBuilder &nb, Location nl, ValueRange ivs) {
                            body(nb, nl, ivs);
                          });
}

/// Loads `input` (a tensor, or a scalar passed through) at the point `ivs`
/// of `dims`, converted to `type`.
static Value loadAt(OpBuilder &b, Location loc, Value original, Value converted,
                    ArrayRef<DimAttr> dims, ValueRange ivs, Type type) {
  auto tensor = llvm::dyn_cast<TdimTensorType>(original.getType());
  if (!tensor)
    return converted;
  Value v = memref::LoadOp::create(b, loc, converted, indicesFor(tensor, dims, ivs));
  return convertFloat(b, loc, v, type);
}

static void storeAt(OpBuilder &b, Location loc, Value value, Value original,
                    Value converted, ArrayRef<DimAttr> dims, ValueRange ivs) {
  auto tensor = llvm::cast<TdimTensorType>(original.getType());
  value = convertFloat(b, loc, value, tensor.getElementType());
  memref::StoreOp::create(b, loc, value, converted, indicesFor(tensor, dims, ivs));
}

/// How the outermost loop of a reduction's nest states its merge: the
/// combine region it merges two partial tuples with (null: a plain scf.for)
/// and whether it is a softmax's statistics (fold.for's max_sum_exp).
struct FoldMerge {
  Region *combine = nullptr;
  bool maxSumExp = false;
};

/// The outermost loop of a nest that states its merge: a fold.for from 0 to
/// `ub` carrying `inits`, whose body `body` builds and whose merge region is
/// `merge.combine` inlined (the constants it uses from outside stay there).
static SmallVector<Value>
buildFoldFor(OpBuilder &b, Location loc, Value ub, ValueRange inits, FoldMerge merge,
             function_ref<SmallVector<Value>(OpBuilder &, Location, Value, ValueRange)> body) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  TypeRange types = inits.getTypes();
  auto loop = fold::ForOp::create(b, loc, types, zero, ub, one, inits,
                                  merge.maxSumExp ? b.getUnitAttr() : UnitAttr());
  OpBuilder::InsertionGuard guard(b);
  SmallVector<Type> bodyTypes{b.getIndexType()};
  llvm::append_range(bodyTypes, types);
  Block *entry = b.createBlock(&loop.getRegion(), {}, bodyTypes,
                               SmallVector<Location>(bodyTypes.size(), loc));
  SmallVector<Value> next = body(b, loc, entry->getArgument(0), entry->getArguments().drop_front());
  fold::YieldOp::create(b, loc, next);
  SmallVector<Type> mergeTypes(types);
  llvm::append_range(mergeTypes, types);
  Block *mergeBlock = b.createBlock(&loop.getMerge(), {}, mergeTypes,
                                    SmallVector<Location>(mergeTypes.size(), loc));
  fold::YieldOp::create(b, loc, inlineRegion(b, *merge.combine, mergeBlock->getArguments()));
  return SmallVector<Value>(loop.getResults());
}

/// Builds nested loops over `dims` carrying `inits`; `body` maps the
/// induction variables (aligned with `dims`) and the carried values to the
/// next carried values. Returns the final values. The outermost loop is a
/// fold.for stating `merge` when it has a combine, else every loop is an
/// scf.for.
static SmallVector<Value>
buildSequential(OpBuilder &b, Location loc, ArrayRef<DimAttr> dims,
                ArrayRef<Value> ubs, ValueRange inits,
                function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange,
                                                ValueRange)> body,
                FoldMerge merge = {}, SmallVector<Value> ivs = {}) {
  if (ivs.size() == dims.size())
    return body(b, loc, ivs, inits);
  auto next = [&](OpBuilder &nb, Location nl, Value iv, ValueRange carried) {
    SmallVector<Value> inner(ivs);
    inner.push_back(iv);
    return buildSequential(nb, nl, dims, ubs, carried, body, {}, inner);
  };
  if (merge.combine)
    return buildFoldFor(b, loc, ubs[ivs.size()], inits, merge, next);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(
      b, loc, zero, ubs[ivs.size()], one, inits,
      [&](OpBuilder &nb, Location nl, Value iv, ValueRange carried) {
        scf::YieldOp::create(nb, nl, next(nb, nl, iv, carried));
      });
  return SmallVector<Value>(loop.getResults().begin(), loop.getResults().end());
}

/// The size of `dim` taken from whichever operand has it.
static Value sizeFromOperands(OpBuilder &b, Location loc, ValueRange original,
                              ValueRange converted, DimAttr dim) {
  for (auto [o, c] : llvm::zip(original, converted))
    if (auto t = llvm::dyn_cast<TdimTensorType>(o.getType()); t && t.hasDim(dim))
      return buildDimSize(b, loc, c, t, dim);
  llvm_unreachable("verifier guarantees an operand with the dimension");
}

namespace {

struct MapLowering : OpConversionPattern<MapOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(MapOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value firstOut = op.getOutputs().front();
    auto space = llvm::cast<TdimTensorType>(firstOut.getType());
    SmallVector<DimAttr> dims(space.getDims());
    Block &body = op.getBody().front();
    buildParallel(rewriter, loc, adaptor.getOutputs().front(), space, dims,
                  [&](OpBuilder &b, Location l, ValueRange ivs) {
                    SmallVector<Value> args;
                    for (auto [i, in] : llvm::enumerate(op.getInputs()))
                      args.push_back(loadAt(b, l, in, adaptor.getInputs()[i], dims, ivs,
                                            body.getArgument(i).getType()));
                    SmallVector<Value> results = inlineRegion(b, op.getBody(), args);
                    for (auto [i, out] : llvm::enumerate(op.getOutputs()))
                      storeAt(b, l, results[i], out, adaptor.getOutputs()[i], dims, ivs);
                  });
    rewriter.eraseOp(op);
    return success();
  }
};

struct ReduceLowering : OpConversionPattern<ReduceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(ReduceOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto outType = llvm::cast<TdimTensorType>(op.getOutputs().front().getType());
    SmallVector<DimAttr> kept(outType.getDims());
    // Reduce in the order the first input that has each dimension lays it
    // out (outermost first), so the innermost loop walks contiguous memory.
    SmallVector<DimAttr> over;
    for (Attribute a : op.getOver())
      over.push_back(llvm::cast<DimAttr>(a));
    SmallVector<DimAttr> overInOrder;
    for (Value in : op.getInputs())
      for (DimAttr d : llvm::cast<TdimTensorType>(in.getType()).getDims())
        if (llvm::is_contained(over, d) && !llvm::is_contained(overInOrder, d))
          overInOrder.push_back(d);
    SmallVector<Type> acc = op.getAccumulatorTypes();

    // A reduction to a single value with one accumulator is itself a
    // parallel loop, its combine an scf.reduce: the GPU mapping splits it
    // over threads and blocks in a fixed tree (init is the identity).
    if (kept.empty() && acc.size() == 1 && !overInOrder.empty()) {
      lowerToParallelReduction(rewriter, loc, op, adaptor, over, overInOrder, acc);
      rewriter.eraseOp(op);
      return success();
    }

    // The fold states its merge when its combine is more than one op
    // (several accumulators, say): a split of the fold merges its chunks
    // with it.
    FoldMerge merge;
    if (!overInOrder.empty() &&
        (acc.size() > 1 || !llvm::hasSingleElement(op.getCombine().front().without_terminator())) &&
        combineIsClosed(op)) {
      merge.combine = &op.getCombine();
      merge.maxSumExp = op.getMaxSumExp() && overInOrder.size() == 1;
    }

    buildParallel(rewriter, loc, adaptor.getOutputs().front(), outType, kept,
                  [&](OpBuilder &b, Location l, ValueRange keptIvs) {
                    SmallVector<Value> inits, ubs;
                    for (Attribute a : op.getInit())
                      inits.push_back(arith::ConstantOp::create(
                          b, l, llvm::cast<TypedAttr>(a)));
                    for (DimAttr d : overInOrder)
                      ubs.push_back(sizeFromOperands(b, l, op.getInputs(),
                                                     adaptor.getInputs(), d));
                    SmallVector<Value> finals = buildSequential(
                        b, l, overInOrder, ubs, inits,
                        [&](OpBuilder &ib, Location il, ValueRange overIvs,
                            ValueRange carried) {
                          return combineAt(ib, il, op, adaptor, kept, keptIvs,
                                           overInOrder, overIvs, over, acc, carried);
                        },
                        merge);
    SmallVector<Value> results = finals;
                    if (!op.getPost().empty()) {
                      Value count = arith::ConstantIndexOp::create(b, l, 1);
                      for (Value ub : ubs)
                        count = arith::MulIOp::create(b, l, count, ub);
                      SmallVector<Value> args(finals);
                      args.push_back(count);
                      results = inlineRegion(b, op.getPost(), args);
                    }
                    for (auto [i, out] : llvm::enumerate(op.getOutputs()))
                      storeAt(b, l, results[i], out, adaptor.getOutputs()[i], kept,
                              keptIvs);
                  });
    rewriter.eraseOp(op);
    return success();
  }

  static void lowerToParallelReduction(OpBuilder &b, Location l, ReduceOp op, OpAdaptor adaptor,
                                       ArrayRef<DimAttr> over, ArrayRef<DimAttr> overInOrder,
                                       ArrayRef<Type> acc) {
    SmallVector<Value> lbs, ubs, steps;
    Value zero = arith::ConstantIndexOp::create(b, l, 0);
    Value one = arith::ConstantIndexOp::create(b, l, 1);
    for (DimAttr d : overInOrder) {
      lbs.push_back(zero);
      steps.push_back(one);
      ubs.push_back(sizeFromOperands(b, l, op.getInputs(), adaptor.getInputs(), d));
    }
    Value init = arith::ConstantOp::create(b, l, llvm::cast<TypedAttr>(op.getInit()[0]));
    auto loop = scf::ParallelOp::create(
        b, l, lbs, ubs, steps, ValueRange{init},
        [&](OpBuilder &nb, Location nl, ValueRange ivs, ValueRange) {
          SmallVector<Value> mapped = mapAt(nb, nl, op, adaptor, {}, {}, overInOrder, ivs, over,
                                            acc);
          auto reduce = scf::ReduceOp::create(nb, nl, mapped);
          Block &combine = reduce.getReductions()[0].front();
          OpBuilder rb = OpBuilder::atBlockBegin(&combine);
          SmallVector<Value> combined =
              inlineRegion(rb, op.getCombine(), combine.getArguments());
          scf::ReduceReturnOp::create(rb, nl, combined[0]);
        });
    SmallVector<Value> results(loop.getResults());
    if (!op.getPost().empty()) {
      Value count = one;
      for (Value ub : ubs)
        count = arith::MulIOp::create(b, l, count, ub);
      SmallVector<Value> args(results);
      args.push_back(count);
      results = inlineRegion(b, op.getPost(), args);
    }
    for (auto [i, out] : llvm::enumerate(op.getOutputs()))
      storeAt(b, l, results[i], out, adaptor.getOutputs()[i], {}, {});
  }

  /// Whether `op`'s combine uses nothing from outside it but constants: a
  /// function of two partial tuples, which a fold.for's merge must be.
  static bool combineIsClosed(ReduceOp op) {
    llvm::SetVector<Value> outside;
    getUsedValuesDefinedAbove(op.getCombine(), outside);
    return llvm::all_of(outside, [](Value v) {
      return v.getDefiningOp() && v.getDefiningOp()->hasTrait<OpTrait::ConstantLike>();
    });
  }

  /// The mapped values at one point of the reduced dimensions: load, map.
  static SmallVector<Value> mapAt(OpBuilder &b, Location l, ReduceOp op, OpAdaptor adaptor,
                                  ArrayRef<DimAttr> kept, ValueRange keptIvs,
                                  ArrayRef<DimAttr> overInOrder, ValueRange overIvs,
                                  ArrayRef<DimAttr> over, ArrayRef<Type> acc) {
    SmallVector<DimAttr> dims(kept);
    dims.append(overInOrder.begin(), overInOrder.end());
    SmallVector<Value> ivs(keptIvs);
    ivs.append(overIvs.begin(), overIvs.end());
    if (op.getMap().empty()) {
      SmallVector<Value> loaded;
      for (auto [i, in] : llvm::enumerate(op.getInputs()))
        loaded.push_back(loadAt(b, l, in, adaptor.getInputs()[i], dims, ivs, acc[i]));
      return loaded;
    }
    Block &mapBlock = op.getMap().front();
    SmallVector<Value> args;
    for (auto [i, in] : llvm::enumerate(op.getInputs()))
      args.push_back(loadAt(b, l, in, adaptor.getInputs()[i], dims, ivs,
                            mapBlock.getArgument(i).getType()));
    // Positions along the reduced dimensions, in `over` order.
    if (mapBlock.getNumArguments() > op.getInputs().size())
      for (DimAttr d : over)
        args.push_back(ivs[llvm::find(dims, d) - dims.begin()]);
    return inlineRegion(b, op.getMap(), args);
  }

  /// One step of the reduction: load, map, combine.
  static SmallVector<Value> combineAt(OpBuilder &b, Location l, ReduceOp op,
                                      OpAdaptor adaptor, ArrayRef<DimAttr> kept,
                                      ValueRange keptIvs, ArrayRef<DimAttr> overInOrder,
                                      ValueRange overIvs, ArrayRef<DimAttr> over,
                                      ArrayRef<Type> acc, ValueRange carried) {
    SmallVector<Value> mapped =
        mapAt(b, l, op, adaptor, kept, keptIvs, overInOrder, overIvs, over, acc);
    SmallVector<Value> args(carried);
    args.append(mapped);
    return inlineRegion(b, op.getCombine(), args);
  }
};

struct ContractLowering : OpConversionPattern<ContractOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(ContractOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (auto tiling = op->getAttrOfType<gpumap::ContractTilingAttr>(
            gpumap::GPUMapDialect::kContractTilingAttrName))
      return lowerTiled(op, adaptor, tiling, rewriter);
    Location loc = op.getLoc();
    auto lhs = llvm::cast<TdimTensorType>(op.getLhs().getType());
    auto out = llvm::cast<TdimTensorType>(op.getOutput().getType());
    SmallVector<DimAttr> kept(out.getDims());
    SmallVector<DimAttr> contracted;
    for (DimAttr d : lhs.getDims())
      if (!out.hasDim(d))
        contracted.push_back(d);
    Type accType = getComputeType(out.getElementType());
    SmallVector<Value> originals{op.getLhs(), op.getRhs()};
    SmallVector<Value> converted{adaptor.getLhs(), adaptor.getRhs()};

    // The sum at the output point `keptIvs` (aligned with `kept`).
    auto sumAt = [&](OpBuilder &b, Location l, ValueRange keptIvs) -> Value {
      Value init;
      if (op.getAccumulate())
        init = loadAt(b, l, op.getOutput(), adaptor.getOutput(), kept, keptIvs, accType);
      else
        init = arith::ConstantOp::create(b, l, b.getFloatAttr(accType, 0.0));
      SmallVector<Value> ubs;
      for (DimAttr d : contracted)
        ubs.push_back(sizeFromOperands(b, l, originals, converted, d));
      return buildSequential(
          b, l, contracted, ubs, ValueRange{init},
          [&](OpBuilder &ib, Location il, ValueRange cIvs, ValueRange carried) {
            SmallVector<DimAttr> dims(kept);
            dims.append(contracted.begin(), contracted.end());
            SmallVector<Value> ivs(keptIvs);
            ivs.append(cIvs.begin(), cIvs.end());
            Value a = loadAt(ib, il, op.getLhs(), adaptor.getLhs(), dims, ivs, accType);
            Value c = loadAt(ib, il, op.getRhs(), adaptor.getRhs(), dims, ivs, accType);
            Value p = arith::MulFOp::create(ib, il, a, c);
            return SmallVector<Value>{arith::AddFOp::create(ib, il, carried[0], p)};
          })[0];
    };
    // The epilogue at that point over the carried states: the value
    // stored, then the states' next values.
    auto finish = [&](OpBuilder &b, Location l, Value sum, ValueRange keptIvs,
                      ValueRange states) -> SmallVector<Value> {
      if (op.getEpilogue().empty())
        return {sum};
      Block &body = op.getEpilogue().front();
      SmallVector<Value> args{sum};
      for (auto [i, in] : llvm::enumerate(op.getWith()))
        args.push_back(loadAt(b, l, in, adaptor.getWith()[i], kept, keptIvs,
                              body.getArgument(i + 1).getType()));
      args.append(states.begin(), states.end());
      return inlineRegion(b, op.getEpilogue(), args);
    };

    if (!op.getScan()) {
      buildParallel(rewriter, loc, adaptor.getOutput(), out, kept,
                    [&](OpBuilder &b, Location l, ValueRange keptIvs) {
                      Value v = finish(b, l, sumAt(b, l, keptIvs), keptIvs, {})[0];
                      storeAt(b, l, v, op.getOutput(), adaptor.getOutput(), kept, keptIvs);
                    });
      rewriter.eraseOp(op);
      return success();
    }
    // A scan in the loops runs as the unfused ops would: every sum into an
    // f32 scratch buffer over all the output's points, then every other
    // point in parallel, the scanned dimension in order, the states
    // carried from step to step. (Summing inside the scan would leave a
    // thread per point a walk over every step's sum: 4-9x slower on an
    // H200.)
    auto outType = llvm::cast<MemRefType>(adaptor.getOutput().getType());
    SmallVector<Value> dynamicSizes;
    for (int64_t i = 0; i < outType.getRank(); ++i)
      if (outType.isDynamicDim(i))
        dynamicSizes.push_back(memref::DimOp::create(rewriter, loc, adaptor.getOutput(), i));
    Value sums = memref::AllocOp::create(
        rewriter, loc, MemRefType::get(outType.getShape(), accType), dynamicSizes);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPoint(op->getBlock()->getTerminator());
      memref::DeallocOp::create(rewriter, loc, sums);
    }
    buildParallel(rewriter, loc, adaptor.getOutput(), out, kept,
                  [&](OpBuilder &b, Location l, ValueRange keptIvs) {
                    memref::StoreOp::create(b, l, sumAt(b, l, keptIvs), sums,
                                            indicesFor(out, kept, keptIvs));
                  });
    DimAttr scan = *op.getScan();
    SmallVector<DimAttr> points;
    for (DimAttr d : kept)
      if (d != scan)
        points.push_back(d);
    unsigned scanAt = *out.getPosition(scan);
    buildParallel(
        rewriter, loc, adaptor.getOutput(), out, points,
        [&](OpBuilder &b, Location l, ValueRange pointIvs) {
          SmallVector<Value> inits;
          for (Attribute a : op.getNumCarried() ? op.getCarryAttr().getValue()
                                                : ArrayRef<Attribute>())
            inits.push_back(arith::ConstantOp::create(b, l, llvm::cast<FloatAttr>(a)));
          Value steps = buildDimSize(b, l, adaptor.getOutput(), out, scan);
          buildSequential(
              b, l, {scan}, {steps}, inits,
              [&](OpBuilder &ib, Location il, ValueRange scanIv, ValueRange states) {
                // The point's indices in `kept` order (`points` skips the scan).
                SmallVector<Value> keptIvs(pointIvs);
                keptIvs.insert(keptIvs.begin() + scanAt, scanIv[0]);
                Value sum = memref::LoadOp::create(ib, il, sums, indicesFor(out, kept, keptIvs));
                SmallVector<Value> results = finish(ib, il, sum, keptIvs, states);
                storeAt(ib, il, results[0], op.getOutput(), adaptor.getOutput(), kept, keptIvs);
                return SmallVector<Value>(results.begin() + 1, results.end());
              });
        });
    rewriter.eraseOp(op);
    return success();
  }

  /// The product as the tensor-core op the tiling was chosen for: which
  /// dimension of each memref is contracted, which of the output's is a
  /// row. The heuristic took one column and contracted dimension and one
  /// row dimension, or several consecutive ones of row-major buffers,
  /// which become one (memref.collapse_shape).
  static LogicalResult lowerTiled(ContractOp op, OpAdaptor adaptor,
                                  gpumap::ContractTilingAttr tiling,
                                  ConversionPatternRewriter &rewriter) {
    auto lhs = llvm::cast<TdimTensorType>(op.getLhs().getType());
    auto rhs = llvm::cast<TdimTensorType>(op.getRhs().getType());
    auto out = llvm::cast<TdimTensorType>(op.getOutput().getType());
    if (rhs.getRank() != 2 || lhs.getRank() != out.getRank())
      return rewriter.notifyMatchFailure(op, "a tiled contraction is of matrices");
    Location loc = op.getLoc();
    // lhs's row dimensions, in its order (consecutive, as in the output);
    // a scanned one is the first and stays apart (the heuristic made sure).
    SmallVector<DimAttr> rows;
    for (DimAttr d : lhs.getDims())
      if (out.hasDim(d))
        rows.push_back(d);
    bool scan = op.getScan().has_value();
    ArrayRef<DimAttr> matrixRows = ArrayRef<DimAttr>(rows).drop_front(scan ? 1 : 0);
    auto merged = [&](Value memref, TdimTensorType type) -> Value {
      if (matrixRows.size() == 1)
        return memref;
      SmallVector<ReassociationIndices> groups;
      unsigned first = *type.getPosition(matrixRows.front());
      for (unsigned i = 0; i < type.getRank(); ++i) {
        if (i > first && i < first + matrixRows.size())
          groups.back().push_back(i);
        else
          groups.push_back({static_cast<int64_t>(i)});
      }
      return memref::CollapseShapeOp::create(rewriter, loc, memref, groups);
    };
    Value lhsMemref = merged(adaptor.getLhs(), lhs);
    Value outMemref = merged(adaptor.getOutput(), out);
    DimAttr contracted = *llvm::find_if(lhs.getDims(), [&](DimAttr d) { return !out.hasDim(d); });
    int64_t lhsK = *lhs.getPosition(contracted) > *lhs.getPosition(matrixRows.front()) ? 1 : 0;
    int64_t rhsK = *rhs.getPosition(contracted);
    int64_t outM = *out.getPosition(matrixRows.front()) == (scan ? 1 : 0) ? 0 : 1;
    SmallVector<Value> with;
    for (auto [in, converted] : llvm::zip(op.getWith(), adaptor.getWith()))
      with.push_back(indexedAsOutput(rewriter, loc, in, converted, rows, scan, out, outMemref));
    ArrayAttr carry;
    if (scan) {
      SmallVector<Attribute> values;
      for (unsigned i = 0; i < op.getNumCarried(); ++i)
        values.push_back(rewriter.getF32FloatAttr(
            llvm::cast<FloatAttr>(op.getCarryAttr()[i]).getValueAsDouble()));
      carry = rewriter.getArrayAttr(values);
    }
    auto tiled = gpumap::TiledContractOp::create(rewriter, loc, lhsMemref, adaptor.getRhs(), with,
                                                 outMemref, lhsK, rhsK, outM, tiling,
                                                 op.getAccumulate(), carry);
    if (!op.getEpilogue().empty())
      moveEpilogue(rewriter, op, tiled);
    rewriter.eraseOp(op);
    return success();
  }

  /// An epilogue input as the tiled op reads it: a scalar as it is, a
  /// tensor as a view indexed as `outMemref` (the output with its row
  /// dimensions `rows` merged, a scanned first one apart), of stride 0
  /// along the dimensions it lacks.
  static Value indexedAsOutput(OpBuilder &b, Location loc, Value original, Value converted,
                               ArrayRef<DimAttr> rows, bool scan, TdimTensorType out,
                               Value outMemref) {
    auto type = llvm::dyn_cast<TdimTensorType>(original.getType());
    if (!type)
      return converted;
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, converted);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    // The output's dimensions, each named by its innermost tdim one.
    DimAttr column = *llvm::find_if(out.getDims(), [&](DimAttr d) {
      return !llvm::is_contained(rows, d);
    });
    DimAttr matrixRow = scan ? rows[1] : rows.front();
    bool rowsFirst = *out.getPosition(matrixRow) < *out.getPosition(column);
    SmallVector<DimAttr, 3> order;
    if (scan)
      order.push_back(rows.front());
    order.push_back(rowsFirst ? rows.back() : column);
    order.push_back(rowsFirst ? column : rows.back());
    SmallVector<OpFoldResult> sizes, strides;
    for (auto [i, d] : llvm::enumerate(order)) {
      sizes.push_back(memref::DimOp::create(b, loc, outMemref, i).getResult());
      std::optional<unsigned> at = type.getPosition(d);
      strides.push_back(at ? meta.getStrides()[*at] : zero);
    }
    SmallVector<int64_t> dynamic(order.size(), ShapedType::kDynamic);
    return memref::ReinterpretCastOp::create(
        b, loc, MemRefType::get(dynamic, type.getElementType(),
                                StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic,
                                                       dynamic)),
        meta.getBaseBuffer(), meta.getOffset(), sizes, strides);
  }

  /// The contraction's epilogue into `tiled`: arguments of the inputs'
  /// element types, widened where the region computes wider; the
  /// terminator a gpumap.yield.
  static void moveEpilogue(ConversionPatternRewriter &rewriter, ContractOp op,
                           gpumap::TiledContractOp tiled) {
    Location loc = op.getLoc();
    Block &old = op.getEpilogue().front();
    SmallVector<Type> types{old.getArgument(0).getType()};
    for (Value in : tiled.getWith()) {
      Type t = in.getType();
      types.push_back(llvm::isa<MemRefType>(t) ? llvm::cast<MemRefType>(t).getElementType() : t);
    }
    for (BlockArgument state : old.getArguments().drop_front(1 + tiled.getWith().size()))
      types.push_back(state.getType());
    OpBuilder::InsertionGuard guard(rewriter);
    Block *body = rewriter.createBlock(&tiled.getEpilogue(), {}, types,
                                       SmallVector<Location>(types.size(), loc));
    SmallVector<Value> args;
    for (auto [arg, want] : llvm::zip(body->getArguments(), old.getArgumentTypes()))
      args.push_back(convertFloat(rewriter, loc, arg, want));
    gpumap::YieldOp::create(rewriter, loc, inlineRegion(rewriter, op.getEpilogue(), args));
  }
};

} // namespace

void nerve::tdim_to_scf::populateTensorOpPatterns(const TdimTypeConverter &converter,
                                                  RewritePatternSet &patterns) {
  patterns.add<MapLowering, ReduceLowering, ContractLowering>(converter,
                                                              patterns.getContext());
}
