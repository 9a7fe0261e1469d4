//===- Memory.cpp - loops, loads, stores, allocations and views ---------===//

#include "Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace nerve;
using namespace nerve::tdim;

namespace {

struct ForLowering : OpConversionPattern<ForOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(ForOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Block *body = op.getBodyBlock();
    TypeConverter::SignatureConversion signature(body->getNumArguments());
    for (auto [i, arg] : llvm::enumerate(body->getArguments()))
      signature.addInputs(i, getTypeConverter()->convertType(arg.getType()));
    body = rewriter.applySignatureConversion(body, signature, getTypeConverter());
    Value lb = adaptor.getLowerBound(), ub = adaptor.getUpperBound();
    Value step = arith::ConstantIndexOp::create(rewriter, loc, op.getStep());
    auto yield = llvm::cast<YieldOp>(body->getTerminator());

    if (op.getParallel()) {
      auto loop = scf::ParallelOp::create(rewriter, loc, ValueRange{lb}, ValueRange{ub},
                                          ValueRange{step});
      Block *dest = loop.getBody();
      rewriter.eraseOp(yield);
      rewriter.inlineBlockBefore(body, dest->getTerminator(), loop.getInductionVars());
      rewriter.eraseOp(op);
      return success();
    }

    if (!op.getReverse()) {
      auto loop = scf::ForOp::create(rewriter, loc, lb, ub, step, adaptor.getInits());
      Block *dest = loop.getBody();
      if (!dest->empty())
        rewriter.eraseOp(dest->getTerminator());
      rewriter.setInsertionPoint(yield);
      rewriter.replaceOpWithNewOp<scf::YieldOp>(yield, yield.getValues());
      SmallVector<Value> args{loop.getInductionVar()};
      llvm::append_range(args, loop.getRegionIterArgs());
      rewriter.inlineBlockBefore(body, dest, dest->end(), args);
      rewriter.replaceOp(op, loop.getResults());
      return success();
    }

    // Reverse: j counts 0 .. trip-1 and the index runs lb + (trip-1-j)*step.
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value span = arith::SubIOp::create(rewriter, loc, ub, lb);
    Value empty = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ule, ub, lb);
    Value rounded = arith::AddIOp::create(
        rewriter, loc, span, arith::SubIOp::create(rewriter, loc, step, one));
    Value trip = arith::SelectOp::create(
        rewriter, loc, empty, zero, arith::DivUIOp::create(rewriter, loc, rounded, step));
    auto loop = scf::ForOp::create(rewriter, loc, zero, trip, one, adaptor.getInits());
    Block *dest = loop.getBody();
    if (!dest->empty())
      rewriter.eraseOp(dest->getTerminator());
    rewriter.setInsertionPointToStart(dest);
    Value last = arith::SubIOp::create(rewriter, loc, trip, one);
    Value k = arith::SubIOp::create(rewriter, loc, last, loop.getInductionVar());
    Value iv = arith::AddIOp::create(rewriter, loc, lb,
                                     arith::MulIOp::create(rewriter, loc, k, step));
    rewriter.setInsertionPoint(yield);
    rewriter.replaceOpWithNewOp<scf::YieldOp>(yield, yield.getValues());
    SmallVector<Value> args{iv};
    llvm::append_range(args, loop.getRegionIterArgs());
    rewriter.inlineBlockBefore(body, dest, dest->end(), args);
    rewriter.replaceOp(op, loop.getResults());
    return success();
  }
};

/// The index operands of a load or store, in the memref's dimension order.
static SmallVector<Value> memrefIndices(TdimTensorType type, ValueRange original,
                                        ValueRange converted) {
  SmallVector<DimAttr> dims;
  for (Value v : original)
    dims.push_back(llvm::cast<TdimIndexType>(v.getType()).getDim());
  return tdim_to_scf::indicesFor(type, dims, converted);
}

struct LoadLowering : OpConversionPattern<LoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(LoadOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto type = llvm::cast<TdimTensorType>(op.getTensor().getType());
    rewriter.replaceOpWithNewOp<memref::LoadOp>(
        op, adaptor.getTensor(),
        memrefIndices(type, op.getIndices(), adaptor.getIndices()));
    return success();
  }
};

struct StoreLowering : OpConversionPattern<StoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(StoreOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto type = llvm::cast<TdimTensorType>(op.getTensor().getType());
    rewriter.replaceOpWithNewOp<memref::StoreOp>(
        op, adaptor.getValue(), adaptor.getTensor(),
        memrefIndices(type, op.getIndices(), adaptor.getIndices()));
    return success();
  }
};

struct AllocLowering : OpConversionPattern<AllocOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(AllocOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto type = llvm::cast<MemRefType>(getTypeConverter()->convertType(op.getType()));
    auto alloc = memref::AllocOp::create(rewriter, op.getLoc(), type,
                                         adaptor.getDynamicSizes());
    // The buffer lives until the kernel returns.
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(op->getBlock()->getTerminator());
    memref::DeallocOp::create(rewriter, op.getLoc(), alloc);
    rewriter.replaceOp(op, alloc);
    return success();
  }
};

/// Casts a view to the layout its tdim type promises, when they differ.
static Value castTo(ConversionPatternRewriter &rewriter, Location loc, Value view,
                    Type type) {
  if (view.getType() == type)
    return view;
  return memref::CastOp::create(rewriter, loc, type, view);
}

/// Offsets, sizes and unit strides covering a whole memref.
static void fullRange(OpBuilder &b, Location loc, Value memref, TdimTensorType type,
                      SmallVectorImpl<OpFoldResult> &offsets,
                      SmallVectorImpl<OpFoldResult> &sizes,
                      SmallVectorImpl<OpFoldResult> &strides) {
  for (auto [pos, size] : llvm::enumerate(type.getSizes())) {
    offsets.push_back(b.getIndexAttr(0));
    strides.push_back(b.getIndexAttr(1));
    if (size != ShapedType::kDynamic)
      sizes.push_back(b.getIndexAttr(size));
    else
      sizes.push_back(memref::DimOp::create(b, loc, memref, pos).getResult());
  }
}

struct SliceLowering : OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = llvm::cast<TdimTensorType>(op.getSource().getType());
    SmallVector<OpFoldResult> offsets, sizes, strides;
    fullRange(rewriter, loc, adaptor.getSource(), type, offsets, sizes, strides);
    unsigned pos = *type.getPosition(op.getDim());
    offsets[pos] = adaptor.getStart();
    if (adaptor.getDynamicLength())
      sizes[pos] = adaptor.getDynamicLength();
    else
      sizes[pos] = rewriter.getIndexAttr(static_cast<int64_t>(*op.getStaticLength()));
    Value view = memref::SubViewOp::create(rewriter, loc, adaptor.getSource(), offsets,
                                           sizes, strides);
    rewriter.replaceOp(op, castTo(rewriter, loc, view,
                                  getTypeConverter()->convertType(op.getType())));
    return success();
  }
};

struct SelectLowering : OpConversionPattern<SelectOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(SelectOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = llvm::cast<TdimTensorType>(op.getSource().getType());
    SmallVector<OpFoldResult> offsets, sizes, strides;
    fullRange(rewriter, loc, adaptor.getSource(), type, offsets, sizes, strides);
    unsigned pos = *type.getPosition(
        llvm::cast<TdimIndexType>(op.getIndex().getType()).getDim());
    offsets[pos] = adaptor.getIndex();
    sizes[pos] = rewriter.getIndexAttr(1);
    auto resultType = llvm::cast<MemRefType>(getTypeConverter()->convertType(op.getType()));
    auto sourceType = llvm::cast<MemRefType>(adaptor.getSource().getType());
    MemRefType reduced = memref::SubViewOp::inferRankReducedResultType(
        resultType.getShape(), sourceType, offsets, sizes, strides);
    Value view = memref::SubViewOp::create(rewriter, loc, reduced, adaptor.getSource(),
                                           offsets, sizes, strides);
    rewriter.replaceOp(op, castTo(rewriter, loc, view, resultType));
    return success();
  }
};

struct ViewLowering : OpConversionPattern<ViewOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ViewOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto source = llvm::cast<TdimTensorType>(op.getSource().getType());
    SmallVector<unsigned> permutation;
    for (Attribute a : op.getOrder())
      permutation.push_back(*source.getPosition(llvm::cast<DimAttr>(a)));
    auto map = AffineMap::getPermutationMap(permutation, getContext());
    Value view = memref::TransposeOp::create(rewriter, op.getLoc(), adaptor.getSource(),
                                             AffineMapAttr::get(map));
    rewriter.replaceOp(op, castTo(rewriter, op.getLoc(), view,
                                  getTypeConverter()->convertType(op.getType())));
    return success();
  }
};

} // namespace

void nerve::tdim_to_scf::populateMemoryPatterns(const TdimTypeConverter &converter,
                                                RewritePatternSet &patterns) {
  patterns.add<ForLowering, LoadLowering, StoreLowering, AllocLowering, SliceLowering,
               SelectLowering, ViewLowering>(converter, patterns.getContext());
}
