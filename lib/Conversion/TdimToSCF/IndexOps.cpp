//===- IndexOps.cpp - typed index values to index arithmetic ------------===//
//
// A `!tdim.index<d>` is a plain `index` once lowered: its dimension was
// checked by the verifier and has no runtime representation.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace nerve;
using namespace nerve::tdim;

namespace {

struct ConstLowering : OpConversionPattern<ConstOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ConstOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<arith::ConstantIndexOp>(op, op.getValue());
    return success();
  }
};

struct SizeLowering : OpConversionPattern<SizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(SizeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto type = llvm::cast<TdimTensorType>(op.getTensor().getType());
    rewriter.replaceOp(op, tdim_to_scf::buildDimSize(rewriter, op.getLoc(),
                                                     adaptor.getTensor(), type,
                                                     op.getDim()));
    return success();
  }
};

template <typename OpTy, typename ArithOp>
struct BinaryLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<ArithOp>(op, adaptor.getLhs(), adaptor.getRhs());
    return success();
  }
};

/// fold: floor division by the ratio of factors; unfold: multiplication.
template <typename OpTy, bool isFold>
struct RefoldLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    int64_t in = llvm::cast<TdimIndexType>(op.getInput().getType()).getDim().getFactor();
    int64_t out = llvm::cast<TdimIndexType>(op.getType()).getDim().getFactor();
    Value ratio = arith::ConstantIndexOp::create(rewriter, op.getLoc(),
                                                 isFold ? out / in : in / out);
    if (isFold)
      rewriter.replaceOpWithNewOp<arith::DivUIOp>(op, adaptor.getInput(), ratio);
    else
      rewriter.replaceOpWithNewOp<arith::MulIOp>(op, adaptor.getInput(), ratio);
    return success();
  }
};

/// cast, to_index, from_index: the value is unchanged.
template <typename OpTy>
struct ForwardLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, adaptor.getInput());
    return success();
  }
};

struct CmpLowering : OpConversionPattern<CmpOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(CmpOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    arith::CmpIPredicate predicate;
    switch (op.getPredicate()) {
    case CmpPredicate::eq: predicate = arith::CmpIPredicate::eq; break;
    case CmpPredicate::ne: predicate = arith::CmpIPredicate::ne; break;
    case CmpPredicate::lt: predicate = arith::CmpIPredicate::ult; break;
    case CmpPredicate::le: predicate = arith::CmpIPredicate::ule; break;
    case CmpPredicate::gt: predicate = arith::CmpIPredicate::ugt; break;
    case CmpPredicate::ge: predicate = arith::CmpIPredicate::uge; break;
    }
    rewriter.replaceOpWithNewOp<arith::CmpIOp>(op, predicate, adaptor.getLhs(),
                                               adaptor.getRhs());
    return success();
  }
};

} // namespace

void nerve::tdim_to_scf::populateIndexPatterns(const TdimTypeConverter &converter,
                                               RewritePatternSet &patterns) {
  patterns.add<ConstLowering, SizeLowering, BinaryLowering<AddOp, arith::AddIOp>,
               BinaryLowering<SubOp, arith::SubIOp>, RefoldLowering<FoldOp, true>,
               RefoldLowering<UnfoldOp, false>, ForwardLowering<CastOp>,
               ForwardLowering<ToIndexOp>, ForwardLowering<FromIndexOp>, CmpLowering>(
      converter, patterns.getContext());
}
